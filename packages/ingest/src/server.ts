import {
  type EnergyDatabase,
  oauthSettings,
  prepareSamplePartitions,
  TokenIntrospector,
} from '@campus/energy-data/live'
import { parseAddressList, runMain, startService } from '@campus/shared'
import { buildIngestApp } from './app.ts'
import { loadIngestConfig } from './config.ts'
import { defaultClientId, startConsumer } from './consumer.ts'
import { HeldBytes } from './held-bytes.ts'
import { startHousekeeping } from './housekeeping.ts'
import { ingestMetrics } from './metrics.ts'
import type { Subscriber } from './mqtt-session.ts'
import { type QueueConsumer, startQueueConsumer } from './queue-consumer.ts'
import { ingestService } from './service.ts'
import { writerReadiness } from './writer.ts'
import { WriterLanes } from './writer-lanes.ts'

runMain(async () => {
  const config = loadIngestConfig()
  const introspection = oauthSettings(config)
  await startService<EnergyDatabase>({
    descriptor: ingestService,
    config,
    build: async (database) => {
      let writer: WriterLanes | undefined
      let subscriber: Subscriber | undefined
      let queue: QueueConsumer | undefined
      // one bound for the bytes of MQTT messages and HTTP packs taken and not yet committed
      const inFlight = new HeldBytes(config.INGEST_IN_FLIGHT_MB * 1_048_576)
      const metrics = ingestMetrics(
        () => writer?.held ?? 0,
        () => inFlight.bytes(),
      )
      writer = new WriterLanes(
        database.pool,
        {
          batchMessages: config.INGEST_BATCH_MESSAGES,
          batchSamples: config.INGEST_BATCH_SAMPLES,
          batchMs: config.INGEST_BATCH_MS,
          limits: {
            maxFutureMs: config.INGEST_MAX_FUTURE_SECONDS * 1000,
            maxAgeMs: config.INGEST_MAX_AGE_DAYS * 86_400_000,
            maxBytes: config.INGEST_MAX_BODY_BYTES,
          },
          stallMs: config.INGEST_STALL_SECONDS * 1000,
          metrics,
          log: { info: (o, m) => app.log.info(o, m), warn: (o, m) => app.log.warn(o, m) },
        },
        config.INGEST_WRITERS,
      )
      const held = writer
      const app = await buildIngestApp({
        database,
        metrics,
        writer: held,
        logLevel: config.LOG_LEVEL,
        maxBodyBytes: config.INGEST_MAX_BODY_BYTES,
        inFlight,
        tokens: introspection ? new TokenIntrospector(introspection) : undefined,
        failedAuthLimit: config.INGEST_RATE_LIMIT_FAILED_AUTH,
        redisUrl: config.REDIS_URL,
        dpopNonceKey: introspection?.dpopNonceKey,
        metricsToken: config.METRICS_TOKEN,
        credentialLimit: config.INGEST_RATE_LIMIT_CREDENTIAL,
        trustedProxies: parseAddressList(config.INGEST_TRUSTED_PROXIES),
        readiness: {
          writer: writerReadiness(held),
          ...(config.MQTT_URL
            ? { broker: () => (subscriber?.connected() ? 'ok' : `not subscribed at ${config.MQTT_URL}`) }
            : {}),
          ...(config.INGEST_QUEUE_URL
            ? { broker: () => (queue?.connected() ? 'ok' : `not consuming queue ${config.INGEST_QUEUE_NAME}`) }
            : {}),
        },
      })
      // the months samples will need, before they come; retention of samples and quarantine
      await prepareSamplePartitions(database.pool)
      const housekeeping = startHousekeeping(database.pool, config, app.log)
      app.addHook('onClose', async () => housekeeping.stop())
      if (!config.MQTT_URL && !config.INGEST_QUEUE_URL) {
        app.log.warn('MQTT_URL is not set: no broker, POST /ingest/senml only')
        app.addHook('preClose', async () => held.drain())
        return app
      }
      const mqttUrl = config.MQTT_URL
      const queueUrl = config.INGEST_QUEUE_URL
      /** Where the measurements come from: a broker's shared subscription, or a replicated queue. */
      const connect = async (): Promise<{ close(): Promise<void>; said: object }> => {
        if (queueUrl) {
          queue = await startQueueConsumer({
            urls: queueUrl.split(','),
            queue: config.INGEST_QUEUE_NAME,
            prefetch: config.INGEST_QUEUE_PREFETCH,
            topicRoot: config.MQTT_TOPIC_ROOT,
            maxMessageBytes: config.INGEST_MAX_BODY_BYTES,
            writer: held,
            onMessage: () => metrics.messages.inc({ transport: 'queue' }),
            log: app.log,
          })
          return {
            close: () => queue?.close() ?? Promise.resolve(),
            said: { broker: queue.node(), queue: config.INGEST_QUEUE_NAME },
          }
        }
        subscriber = await startConsumer({
          url: mqttUrl as string,
          // with a username, the client id is the username (the brokers allow no other)
          clientId: config.MQTT_CLIENT_ID ?? config.MQTT_USERNAME ?? defaultClientId(config.INGEST_PORT),
          username: config.MQTT_USERNAME,
          password: config.MQTT_PASSWORD,
          shareGroup: config.MQTT_SHARED ? config.MQTT_SHARE_GROUP : undefined,
          sessionSeconds: config.MQTT_SESSION_SECONDS,
          keepaliveSeconds: config.MQTT_KEEPALIVE_SECONDS,
          inFlight: config.MQTT_IN_FLIGHT,
          inFlightBytes: inFlight,
          maxMessageBytes: config.INGEST_MAX_BODY_BYTES,
          topicRoot: config.MQTT_TOPIC_ROOT,
          writer: held,
          onMessage: () => metrics.messages.inc({ transport: 'mqtt' }),
          log: app.log,
        })
        const said = { broker: mqttUrl, shared: subscriber.shared, mqtt: subscriber.version === 5 ? '5' : '3.1.1' }
        return { close: () => subscriber?.close() ?? Promise.resolve(), said }
      }
      // the broker's backlog is taken once the service answers: its probes and POST never wait for it;
      // a broker that cannot be reached (or refuses) is tried again, and readiness says so meanwhile
      let closing = false
      let source: { close(): Promise<void> } | undefined
      const take = async (delayMs: number): Promise<void> => {
        if (closing) return
        try {
          const connected = await connect()
          source = connected
          if (closing) return void (await connected.close())
          app.log.info(connected.said, 'taking measurements from the broker')
        } catch (error) {
          app.log.warn({ err: error, retryMs: delayMs }, 'cannot take measurements from the broker; trying again')
          await new Promise((resolve) => setTimeout(resolve, delayMs))
          return take(Math.min(delayMs * 2, 30_000))
        }
      }
      app.addHook('onListen', async () => {
        void take(1000)
      })
      // SIGTERM: stop taking messages, write and acknowledge those held, then leave: the broker keeps the rest
      app.addHook('preClose', async () => {
        closing = true
        await held.drain()
        await source?.close()
      })
      return app
    },
  })
})
