import fp from 'fastify-plugin'
import type { EnergySettings } from '../config.ts'

/** Decorates `settings` and `now`, the clock of default windows. */
export const settingsPlugin = fp(
  async (app, options: { settings: EnergySettings; now: () => number }) => {
    app.decorate('settings', options.settings)
    app.decorate('now', options.now)
  },
  { name: 'energy-settings' },
)
