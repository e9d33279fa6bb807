import { runMain, startService } from '@campus/shared'
import { buildApp } from './app.ts'
import { loadOAuthConfig, settingsFromConfig } from './config.ts'
import type { OAuthDB } from './db/schema.ts'
import { oauthService } from './service.ts'

runMain(async () => {
  const config = loadOAuthConfig()
  await startService<OAuthDB>({
    descriptor: oauthService,
    config,
    build: (database) => buildApp({ database, logLevel: config.LOG_LEVEL, settings: settingsFromConfig(config) }),
  })
})
