import { runMain, service, startService } from '@campus/shared'
import { buildApp } from './app.ts'
import { loadEnergyConfig } from './config.ts'

runMain(async () => {
  const config = loadEnergyConfig()
  await startService({
    descriptor: service('energy'),
    config,
    port: config.ENERGY_PORT,
    databaseUrl: config.ENERGY_DATABASE_URL,
    build: (database) => buildApp({ database, logLevel: config.LOG_LEVEL, settings: config }),
  })
})
