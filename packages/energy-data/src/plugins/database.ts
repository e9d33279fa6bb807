import type { Database } from '@campus/shared'
import fp from 'fastify-plugin'
import type { EnergyDatabase } from '../db/schema.ts'

/** Decorates `db` and its `pool`; whoever opened the database closes it. */
export const databasePlugin = fp(
  async (app, options: { database: Database<EnergyDatabase> }) => {
    app.decorate('db', options.database.db)
    app.decorate('pool', options.database.pool)
  },
  { name: 'energy-database' },
)
