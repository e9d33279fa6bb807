import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import type { EnergyDatabase } from '../db/schema.ts'
import { chartRoutes } from '../routes/charts.ts'
import { dashboardRoutes } from '../routes/dashboard.ts'
import { reportRoutes } from '../routes/reports.ts'

/** The public views of the data: charts, reports and the dashboard page (no API key; HTTP caching). */
export interface PublicViewsOptions {
  db: Kysely<EnergyDatabase>
  /** The service's zone (ENERGY_TIMEZONE): local days, hours and printed times of every view. */
  zone: string
  now: () => number
}

export async function publicViews(app: FastifyInstance, options: PublicViewsOptions): Promise<void> {
  await app.register(chartRoutes, options)
  await app.register(reportRoutes, options)
  await app.register(dashboardRoutes, options)
}
