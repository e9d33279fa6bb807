import fp from 'fastify-plugin'
import type { EnergyApp } from '../energy-app.ts'
import { createExporter } from '../export/export.ts'

/** Decorates `exporter`: one per process, so its concurrency gate counts every export of the process. */
export const exporterPlugin = fp(
  async (app) => {
    const { pool, settings } = app as EnergyApp
    app.decorate('exporter', createExporter({ pool, maxRows: settings.maxRows, maxStreams: settings.maxStreams }))
  },
  { name: 'energy-exporter', dependencies: ['energy-settings', 'energy-database'] },
)
