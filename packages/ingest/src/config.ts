import { OAuthResourceConfig, SharedCounterConfig } from '@campus/energy-data/live'
import { CommonConfig, ConfigError, DatabaseUrl, loadConfig, Port, TrustedProxies } from '@campus/shared'
import Type, { type Static } from 'typebox'
import { ingestService, TopicRoot } from './service.ts'

/** Transactions written at once by default (INGEST_WRITERS): one a core of a small machine. */
export const DEFAULT_WRITERS = 2
/** Megabytes of packs held ahead of their commit (INGEST_IN_FLIGHT_MB), held as they came: beside the 192 MB heap. */
export const DEFAULT_IN_FLIGHT_MB = 32

const IngestConfigSchema = Type.Object({
  ...CommonConfig,
  INGEST_PORT: Port(ingestService.defaultPort),
  ENERGY_DATABASE_URL: DatabaseUrl(),
  // the data API's resource-server client: a token with the write_energy scope may POST
  ...OAuthResourceConfig,
  ...SharedCounterConfig,
  INGEST_TRUSTED_PROXIES: TrustedProxies(),
  INGEST_RATE_LIMIT_CREDENTIAL: Type.Integer({
    minimum: 1,
    default: 600,
    description:
      'Packs one valid credential (API key, or OAuth application) may post a minute; past it, 429 with Retry-After',
  }),
  INGEST_RATE_LIMIT_FAILED_AUTH: Type.Integer({
    minimum: 1,
    default: 30,
    description:
      'Failed authentications (unknown, expired or revoked keys and tokens) per minute and client address; past it, 429 before any check',
  }),
  MQTT_URL: Type.Optional(
    Type.String({
      pattern: '^mqtts?://',
      description: 'Broker the dataloggers publish to (mqtt://127.0.0.1:1883); unset: no MQTT, HTTP only',
    }),
  ),
  INGEST_QUEUE_URL: Type.Optional(
    Type.String({
      pattern: '^amqps?://[^,]+(,amqps?://[^,]+)*$',
      description:
        'A replicated queue instead of MQTT_URL: the RabbitMQ nodes (amqp://user:password@host:port, comma-separated) whose quorum queue the dataloggers\u2019 MQTT packs reach (docs/SCALING.md); the instances compete for its messages',
    }),
  ),
  INGEST_QUEUE_NAME: Type.String({
    default: 'ingest',
    pattern: '^[A-Za-z0-9_.-]+$',
    description: 'The quorum queue (declared and bound to amq.topic on connection)',
  }),
  INGEST_QUEUE_PREFETCH: Type.Integer({
    minimum: 1,
    maximum: 65_535,
    default: 1000,
    description:
      'Messages the queue delivers to an instance ahead of their acknowledgement (each acknowledged after its commit)',
  }),
  MQTT_CLIENT_ID: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 23,
      description:
        'Client id of this instance at the broker: its persistent session (default: MQTT_USERNAME, which the brokers of this project require; without one ingest-<host>-<port>, stable across restarts)',
    }),
  ),
  MQTT_USERNAME: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        'The ingest service\u2019s user at the broker, one per instance (pnpm energy datalogger:credentials --ingest NAME)',
    }),
  ),
  MQTT_PASSWORD: Type.Optional(Type.String({ minLength: 1, description: 'Its password' })),
  MQTT_SHARE_GROUP: Type.String({
    default: 'ingest',
    pattern: '^[A-Za-z0-9_-]+$',
    description: 'Shared-subscription group: instances in one group split the stream',
  }),
  MQTT_TOPIC_ROOT: TopicRoot,
  MQTT_SHARED: Type.Boolean({
    default: true,
    description:
      'false: one instance on the plain topic, no shared subscription (a Mosquitto restart keeps it: docs/LIVE.md)',
  }),
  MQTT_SESSION_SECONDS: Type.Integer({
    minimum: 0,
    default: 86_400,
    description: 'How long the broker keeps this instance\u2019s session (and its messages) while it is away',
  }),
  MQTT_KEEPALIVE_SECONDS: Type.Integer({
    minimum: 5,
    maximum: 3600,
    default: 30,
    description: 'MQTT keepalive: a broker silent for 1.5 times this is left and connected again',
  }),
  MQTT_IN_FLIGHT: Type.Integer({
    minimum: 1,
    maximum: 65_535,
    default: 1000,
    description:
      'Messages the broker may send ahead of their acknowledgement (MQTT 5 receive maximum); each is acknowledged after its commit, so they are the batches the writer commits together',
  }),
  INGEST_IN_FLIGHT_MB: Type.Integer({
    minimum: 1,
    maximum: 1024,
    default: DEFAULT_IN_FLIGHT_MB,
    description:
      'Megabytes of packs (MQTT messages and HTTP bodies) held ahead of their commit: past it the service reads nothing more from the broker and answers a POST 503 (HTTP packs hold half of it at most, one credential a quarter), until commits free room (the receive maximum bounds messages, this their bytes)',
  }),
  INGEST_WRITERS: Type.Integer({
    minimum: 1,
    maximum: 16,
    default: DEFAULT_WRITERS,
    description:
      'Transactions written at once, each for its own dataloggers (their meters differ; a group row mirrored from both is taken in turn): the database writes one while the service reads the next',
  }),
  INGEST_BATCH_MESSAGES: Type.Integer({
    minimum: 1,
    default: 1000,
    description: 'Most messages written in one transaction',
  }),
  INGEST_BATCH_SAMPLES: Type.Integer({
    minimum: 1,
    default: 20_000,
    description: 'Most samples written in one transaction (a message larger than this is written alone)',
  }),
  INGEST_BATCH_MS: Type.Integer({
    minimum: 0,
    default: 0,
    description:
      'How long a batch waits for more messages before it is written (0: none; messages arriving during a write form the next batch)',
  }),
  INGEST_MAX_FUTURE_SECONDS: Type.Integer({
    minimum: 0,
    default: 300,
    description: 'A sample stamped further ahead of its arrival than this goes to the quarantine',
  }),
  INGEST_MAX_AGE_DAYS: Type.Integer({
    minimum: 1,
    default: 30,
    description:
      'A sample stamped further back than this before its arrival goes to the quarantine (a datalogger\u2019s buffer after an outage fits in it)',
  }),
  INGEST_MAX_BODY_BYTES: Type.Integer({
    minimum: 1024,
    default: 1_048_576,
    description:
      'Largest SenML pack taken, over HTTP or MQTT (a larger one is refused: 413 over HTTP; over MQTT quarantined by its first 4 KiB)',
  }),
  INGEST_STALL_SECONDS: Type.Integer({
    minimum: 1,
    default: 60,
    description: 'Messages held this long without a commit make /health/ready answer 503 (the writer is stalled)',
  }),
  INGEST_SAMPLES_RETENTION_DAYS: Type.Integer({
    minimum: 0,
    default: 0,
    description:
      'Raw samples older than this are dropped by whole months (their quarter hours stay); 0 keeps them all. Longer than INGEST_MAX_AGE_DAYS',
  }),
  INGEST_QUARANTINE_RETENTION_DAYS: Type.Integer({
    minimum: 1,
    default: 90,
    description: 'Quarantined messages older than this are deleted',
  }),
})

export type IngestConfig = Static<typeof IngestConfigSchema>

export function loadIngestConfig(): IngestConfig {
  const config = loadConfig(IngestConfigSchema)
  const retention = config.INGEST_SAMPLES_RETENTION_DAYS
  if (retention !== 0 && retention <= config.INGEST_MAX_AGE_DAYS) {
    throw new ConfigError(
      `INGEST_SAMPLES_RETENTION_DAYS (${retention}) must exceed INGEST_MAX_AGE_DAYS (${config.INGEST_MAX_AGE_DAYS}): a sample still taken must find its month kept`,
    )
  }
  if (config.INGEST_QUEUE_URL && config.MQTT_URL) {
    throw new ConfigError(
      'MQTT_URL and INGEST_QUEUE_URL are both set: an instance takes from a broker or from a replicated queue, not both',
    )
  }
  return config
}
