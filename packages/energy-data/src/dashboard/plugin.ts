import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import type { EnergyDatabase } from '../db/schema.ts'
import { chartRoutes } from '../routes/charts.ts'
import { dashboardRoutes } from '../routes/dashboard.ts'
import { reportRoutes } from '../routes/reports.ts'

/** The public views of the data: charts, reports and the dashboard page (no API key; HTTP caching). */
export async function publicViews(app: FastifyInstance, options: { db: Kysely<EnergyDatabase> }): Promise<void> {
  await app.register(chartRoutes, options)
  await app.register(reportRoutes, options)
  await app.register(dashboardRoutes)
}
