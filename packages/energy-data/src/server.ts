import { runMain, startService } from '@campus/shared'
import { buildApp } from './app.ts'
import { loadEnergyConfig } from './config.ts'
import { energyService } from './service.ts'

runMain(async () => {
  const config = loadEnergyConfig()
  await startService({
    descriptor: energyService,
    config,
    build: (database) => buildApp({ database, logLevel: config.LOG_LEVEL, settings: config }),
  })
})
