import { runMain, service, startService } from '@campus/shared'
import { buildApp } from './app.ts'
import { loadOAuthConfig, settingsFromConfig } from './config.ts'

runMain(async () => {
  const config = loadOAuthConfig()
  await startService({
    descriptor: service('oauth'),
    config,
    port: config.OAUTH_PORT,
    databaseUrl: config.OAUTH_DATABASE_URL,
    build: (database) => buildApp({ database, logLevel: config.LOG_LEVEL, settings: settingsFromConfig(config) }),
  })
})
