import { createServer, type Server } from 'node:net'
import { Aedes } from 'aedes'

/**
 * The embedded broker of `npm start` without MQTT_URL: aedes on loopback, in memory (its
 * sessions last as long as the stack). aedes speaks MQTT 3.1.1, so the ingest service takes a
 * persistent 3.1.1 session there (consumer.ts); a campus runs Mosquitto, EMQX or HiveMQ instead.
 */
export async function startEmbeddedBroker(
  host: string,
  port: number,
): Promise<{ url: string; close: () => Promise<void> }> {
  const broker = await Aedes.createBroker()
  const server: Server = createServer(broker.handle)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  const address = server.address()
  const actual = typeof address === 'object' && address ? address.port : port
  return {
    url: `mqtt://${host}:${actual}`,
    close: () =>
      new Promise<void>((resolve) => {
        broker.close(() => server.close(() => resolve()))
      }),
  }
}
