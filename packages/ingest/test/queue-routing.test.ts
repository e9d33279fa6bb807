import { describe, expect, it } from 'vitest'
import { loadIngestConfig } from '../src/config.ts'
import { redact, routingPattern, topicOfRoutingKey } from '../src/queue-consumer.ts'

/** RabbitMQ's MQTT plugin reads a topic's '/' as '.' and a '.' as '/': the consumer reads it back. */
describe('the queue of the MQTT plugin', () => {
  it('binds every datalogger topic under the root, as a routing pattern', () => {
    expect(routingPattern('campus')).toBe('campus.*.senml')
    expect(routingPattern('site.a')).toBe('site/a.*.senml')
  })

  it('reads a routing key back into the topic the datalogger published on', () => {
    expect(topicOfRoutingKey('campus.DL-CF-01.senml')).toBe('campus/DL-CF-01/senml')
    expect(topicOfRoutingKey('site/a.DL.1.senml')).toBe('site.a/DL/1/senml')
  })

  it('never logs a broker password', () => {
    expect(redact('amqp://ingest:secret@127.0.0.1:5672')).toBe('amqp://ingest:***@127.0.0.1:5672')
  })

  it('takes from a broker or from a queue, not both', () => {
    const saved = { ...process.env }
    try {
      process.env.ENERGY_DATABASE_URL = 'postgres://127.0.0.1/energy'
      process.env.MQTT_URL = 'mqtt://127.0.0.1:1883'
      process.env.INGEST_QUEUE_URL = 'amqp://127.0.0.1:5672'
      expect(() => loadIngestConfig()).toThrow(/MQTT_URL and INGEST_QUEUE_URL are both set/)
      delete process.env.MQTT_URL
      process.env.INGEST_QUEUE_URL = 'amqp://a:b@127.0.0.1:5672,amqp://a:b@127.0.0.1:5673'
      expect(loadIngestConfig().INGEST_QUEUE_URL?.split(',')).toHaveLength(2)
    } finally {
      process.env = saved
    }
  })
})
