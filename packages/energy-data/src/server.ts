import { runMain, startService } from '@campus/shared'
import { buildApp } from './app.ts'
import { loadEnergyConfig, settingsFromConfig } from './config.ts'
import type { EnergyDatabase } from './db/schema.ts'
import { energyService } from './service.ts'

runMain(async () => {
  const config = loadEnergyConfig()
  await startService<EnergyDatabase>({
    descriptor: energyService,
    config,
    build: (database) => buildApp({ database, logLevel: config.LOG_LEVEL, settings: settingsFromConfig(config) }),
  })
})
