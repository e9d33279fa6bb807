import { DEMO_DAYS, energyService } from '@campus/energy-data/service'
import { ingestService, TopicRoot } from '@campus/ingest/service'
import { oauthService } from '@campus/oauth-server/service'
import { CommonConfig, DatabaseUrl, loadConfig, Port, type ServiceDescriptor } from '@campus/shared'
import Type from 'typebox'

/** The services of the stack, in the order they are listed. */
export const services: readonly ServiceDescriptor[] = [oauthService, energyService]

/**
 * What the stack reads: where embedded databases live, the interface, and each service's port
 * and database URL under the names (and with the defaults) its descriptor gives.
 */
const StackConfigSchema = Type.Object({
  ...Object.fromEntries(
    services.flatMap((s) => [
      [s.portEnv, Port(s.defaultPort)],
      [s.databaseUrlEnv, DatabaseUrl()],
    ]),
  ),
  HOST: CommonConfig.HOST,
  DATA_DIR: CommonConfig.DATA_DIR,
  [ingestService.portEnv]: Port(ingestService.defaultPort),
  MQTT_URL: Type.Optional(
    Type.String({ pattern: '^mqtts?://', description: 'A broker to use instead of the embedded one' }),
  ),
  MQTT_PORT: Port(1884),
  MQTT_TOPIC_ROOT: TopicRoot,
  SIMULATE_DATALOGGERS: Type.Boolean({
    default: true,
    description: 'Simulated dataloggers publish live demo samples (false: only real ones)',
  }),
  DEMO_DAYS: Type.Integer({
    minimum: 1,
    default: DEMO_DAYS,
    description: 'Days of demo measurements up to now that the first start seeds',
  }),
})

export type StackConfig = {
  HOST: string
  DATA_DIR: string
  MQTT_URL?: string
  MQTT_PORT?: number
  MQTT_TOPIC_ROOT?: string
  SIMULATE_DATALOGGERS?: boolean
  DEMO_DAYS?: number
} & Record<string, unknown>

export const loadStackConfig = (): StackConfig => loadConfig(StackConfigSchema) as StackConfig
