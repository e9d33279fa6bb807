import { fileURLToPath } from 'node:url'
import { DATALOGGER_OF_TOPIC, energyService, senmlTopic, senmlTopics, TOPIC_ROOT } from '@campus/energy-data/live'
import type { ServiceDescriptor } from '@campus/shared'
import Type from 'typebox'

const path = (relative: string) => fileURLToPath(new URL(relative, import.meta.url))

/**
 * The ingest service writes into the energy database (the data API's package owns it and its
 * migrations); its administration (the quarantine) is the data API's command line.
 */
export const ingestService: ServiceDescriptor = {
  name: 'ingest',
  title: 'Live measurements ingest',
  portEnv: 'INGEST_PORT',
  defaultPort: 8100,
  databaseUrlEnv: energyService.databaseUrlEnv,
  migrationsDir: energyService.migrationsDir,
  serverEntry: path('./server.ts'),
  cliEntry: energyService.cliEntry,
  nodeOptions: ['--max-old-space-size=192'],
}

/** MQTT_TOPIC_ROOT, as the ingest service and the stack's simulated dataloggers read it. */
export const TopicRoot = Type.String({
  default: TOPIC_ROOT,
  pattern: '^[A-Za-z0-9_.-]+$',
  description:
    'First level of the dataloggers\u2019 topics: <root>/<datalogger id>/senml (a broker shared by several sites)',
})

export { DATALOGGER_OF_TOPIC, senmlTopic, senmlTopics, TOPIC_ROOT }
