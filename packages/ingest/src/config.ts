import { OAuthResourceConfig, SharedCounterConfig } from '@campus/energy-data/live'
import { CommonConfig, DatabaseUrl, loadConfig, Port } from '@campus/shared'
import Type, { type Static } from 'typebox'
import { ingestService, TopicRoot } from './service.ts'

const IngestConfigSchema = Type.Object({
  ...CommonConfig,
  INGEST_PORT: Port(ingestService.defaultPort),
  ENERGY_DATABASE_URL: DatabaseUrl(),
  // the data API's resource-server client: a token with the write_energy scope may POST
  ...OAuthResourceConfig,
  ...SharedCounterConfig,
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
  MQTT_CLIENT_ID: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 23,
      description:
        'Client id of this instance at the broker: its persistent session (default: ingest-<host>-<port>, stable across restarts)',
    }),
  ),
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
    description: 'How long the broker keeps this instance’s session (and its messages) while it is away',
  }),
  INGEST_BATCH_MESSAGES: Type.Integer({
    minimum: 1,
    default: 500,
    description: 'Most messages written in one transaction',
  }),
  INGEST_BATCH_MS: Type.Integer({
    minimum: 0,
    default: 0,
    description:
      'How long a batch waits for more messages before it is written (0: none; messages arriving during a write form the next batch)',
  }),
  MQTT_CONNECTIONS: Type.Integer({
    minimum: 1,
    maximum: 32,
    default: 8,
    description:
      'Connections of this instance in its shared-subscription group: each takes one message at a time, acknowledged after its commit, so several keep the writer busy (1 without a shared subscription)',
  }),
  INGEST_MAX_FUTURE_SECONDS: Type.Integer({
    minimum: 0,
    default: 300,
    description: 'A sample stamped further ahead of its arrival than this goes to the quarantine',
  }),
  INGEST_MAX_BODY_BYTES: Type.Integer({
    minimum: 1024,
    default: 1_048_576,
    description: 'Largest SenML pack POST /ingest/senml takes',
  }),
})

export type IngestConfig = Static<typeof IngestConfigSchema>

export const loadIngestConfig = (): IngestConfig => loadConfig(IngestConfigSchema)
