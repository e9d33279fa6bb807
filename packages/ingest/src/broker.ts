import { createServer, type Server } from 'node:net'
import {
  type BrokerUser,
  clientIdAllowed,
  mayPublish,
  maySubscribe,
  verifyBrokerPassword,
} from '@campus/energy-data/live'
import { Aedes, type Client } from 'aedes'

export interface BrokerAccounts {
  /** The user of a username, with its stored `$7$` password hash (the energy database's broker_credentials). */
  find: (username: string) => Promise<(BrokerUser & { password_hash: string }) | undefined>
  /** MQTT_TOPIC_ROOT. */
  topicRoot: string
}

/** CONNACK return codes of MQTT 3.1.1. */
const IDENTIFIER_REJECTED = 2
const BAD_USERNAME_OR_PASSWORD = 4

const refused = (message: string, returnCode: number) => Object.assign(new Error(message), { returnCode })

/**
 * The embedded broker of `npm start` without MQTT_URL: aedes on loopback, in memory (its
 * sessions last as long as the stack). aedes speaks MQTT 3.1.1, so the ingest service takes a
 * persistent 3.1.1 session there (consumer.ts); a campus runs Mosquitto, EMQX or HiveMQ instead.
 * Nobody connects without a credential of the energy database, and each user does only what
 * broker-access.ts allows it, as Mosquitto's configuration written from the same table does.
 */
export async function startEmbeddedBroker(
  host: string,
  port: number,
  accounts: BrokerAccounts,
): Promise<{ url: string; close: () => Promise<void> }> {
  const users = new WeakMap<Client, BrokerUser>()
  const broker = await Aedes.createBroker({
    authenticate: (client, username, password, done) => {
      const check = async (): Promise<BrokerUser> => {
        const user = username && password ? await accounts.find(username) : undefined
        if (!user || !(await verifyBrokerPassword(password!.toString(), user.password_hash)))
          throw refused('bad username or password', BAD_USERNAME_OR_PASSWORD)
        // a client's id is its username: no one takes over another's (the ingest's) session
        if (!clientIdAllowed(user, client.id)) throw refused('the client id must be the username', IDENTIFIER_REJECTED)
        return { username: user.username, role: user.role }
      }
      check().then(
        (user) => {
          users.set(client, user)
          done(null, true)
        },
        (error: Error) => done(error as Error & { returnCode: number }, false),
      )
    },
    authorizePublish: (client, packet, done) => {
      const user = client ? users.get(client) : undefined
      // MQTT 3.1.1 cannot refuse one PUBLISH: aedes closes the connection and the message is dropped
      if (user && mayPublish(user, packet.topic, accounts.topicRoot)) done(null)
      else done(new Error(`not allowed to publish to ${packet.topic}`))
    },
    authorizeSubscribe: (client, subscription, done) => {
      const user = client ? users.get(client) : undefined
      // refused in the SUBACK (0x80), the connection kept
      done(null, user && maySubscribe(user, subscription.topic, accounts.topicRoot) ? subscription : null)
    },
  })
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
