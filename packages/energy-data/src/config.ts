import { CommonConfig, DatabaseUrl, loadConfig, Port } from '@campus/shared'
import Type, { type Static } from 'typebox'

export const EnergyConfigSchema = Type.Object({
  ...CommonConfig,
  ENERGY_PORT: Port(8000),
  ENERGY_DATABASE_URL: DatabaseUrl(),
})

export type EnergyConfig = Static<typeof EnergyConfigSchema>

export const loadEnergyConfig = (env: NodeJS.ProcessEnv = process.env): EnergyConfig =>
  loadConfig(EnergyConfigSchema, env)
