/**
 * The instance every plugin of the data API works on: Fastify with the TypeBox type provider,
 * plus the services the capability plugins (`plugins/`) decorate it with.
 */
import { routePlugins, type ServiceApp } from '@campus/shared'
import type { Kysely } from 'kysely'
import type pg from 'pg'
import type { AlertEngine } from './alerts/engine.ts'
import type { EnergySettings } from './config.ts'
import type { EnergyDatabase } from './db/schema.ts'
import type { Exporter } from './export/export.ts'
import type { EndpointCatalog } from './plugins/auth.ts'

/** The decorations, each added by the capability plugin named beside it. */
export interface EnergyServices {
  /** `energy-settings` */
  settings: EnergySettings
  /** `energy-settings`: the clock of default windows (tests pin it) */
  now: () => number
  /** `energy-database` */
  db: Kysely<EnergyDatabase>
  /** `energy-database`: the pool under `db`, for the export path's array-mode reads */
  pool: pg.Pool
  /** `energy-auth`: every route of the API with its guard */
  endpointCatalog: EndpointCatalog
  /** `energy-exporter`: the /data export path and its concurrency gate */
  exporter: Exporter
  /** `energy-alerts`: evaluation and delivery of the alert rules */
  alerts: AlertEngine
}

export type EnergyApp = ServiceApp<EnergyServices>

/** The capability plugins, by the name they register under. */
const CAPABILITIES = [
  'energy-settings',
  'energy-database',
  'energy-auth',
  'energy-rate-limit',
  'energy-exporter',
  'energy-alerts',
]

/** A plugin of routes, registered after the capability plugins and handed the typed instance. */
export const routePlugin = routePlugins<EnergyApp>(CAPABILITIES)
