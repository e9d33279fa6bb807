import { type EnergyDatabase, oauthSettings, TokenIntrospector } from '@campus/energy-data/live'
import { runMain, startService } from '@campus/shared'
import { buildIngestApp } from './app.ts'
import { loadIngestConfig } from './config.ts'
import { defaultClientId, startConsumer } from './consumer.ts'
import { ingestMetrics } from './metrics.ts'
import { ingestService } from './service.ts'
import { BatchWriter } from './writer.ts'

runMain(async () => {
  const config = loadIngestConfig()
  const introspection = oauthSettings(config)
  await startService<EnergyDatabase>({
    descriptor: ingestService,
    config,
    build: async (database) => {
      let writer: BatchWriter | undefined
      const metrics = ingestMetrics(() => writer?.held ?? 0)
      const app = await buildIngestApp({
        database,
        metrics,
        logLevel: config.LOG_LEVEL,
        maxFutureMs: config.INGEST_MAX_FUTURE_SECONDS * 1000,
        maxBodyBytes: config.INGEST_MAX_BODY_BYTES,
        tokens: introspection ? new TokenIntrospector(introspection) : undefined,
        failedAuthLimit: config.INGEST_RATE_LIMIT_FAILED_AUTH,
        redisUrl: config.REDIS_URL,
        dpopNonceKey: introspection?.dpopNonceKey,
      })
      if (!config.MQTT_URL) {
        app.log.warn('MQTT_URL is not set: no broker, POST /ingest/senml only')
        return app
      }
      writer = new BatchWriter(database.pool, {
        batchMessages: config.INGEST_BATCH_MESSAGES,
        batchMs: config.INGEST_BATCH_MS,
        maxFutureMs: config.INGEST_MAX_FUTURE_SECONDS * 1000,
        metrics,
        log: app.log,
      })
      const held = writer
      const consumer = (clientId: string) =>
        startConsumer({
          url: config.MQTT_URL as string,
          clientId,
          shareGroup: config.MQTT_SHARED ? config.MQTT_SHARE_GROUP : undefined,
          sessionSeconds: config.MQTT_SESSION_SECONDS,
          topicRoot: config.MQTT_TOPIC_ROOT,
          writer: held,
          onMessage: () => metrics.messages.inc({ transport: 'mqtt' }),
          log: app.log,
        })
      const clientId = config.MQTT_CLIENT_ID ?? defaultClientId(config.INGEST_PORT)
      const first = await consumer(clientId)
      const { shared } = first
      // more connections in the group only where the stream is shared (a plain subscription would count twice)
      const more = shared
        ? await Promise.all(
            Array.from({ length: config.MQTT_CONNECTIONS - 1 }, (_, i) => consumer(`${clientId}-${i + 2}`)),
          )
        : []
      const clients = [first, ...more].map((c) => c.client)
      app.log.info(
        { broker: config.MQTT_URL, shared, connections: clients.length },
        'taking measurements from the broker',
      )
      // SIGTERM: stop taking messages, write and acknowledge those held, then leave the session to the broker
      app.addHook('preClose', async () => {
        await held.drain()
        await Promise.all(clients.map((c) => c.endAsync()))
      })
      return app
    },
  })
})
