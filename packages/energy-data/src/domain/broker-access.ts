import { pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'

/**
 * Who may do what at the MQTT broker, for the embedded broker and for Mosquitto alike: a datalogger
 * publishes only to its own topic and subscribes to nothing; an ingest instance subscribes to the
 * stream (shared or not) and publishes nothing; every client's id is its username, so no one
 * takes over another's session. Nobody connects without a credential.
 */

/** The first level of every datalogger's topic, unless MQTT_TOPIC_ROOT says otherwise. */
export const TOPIC_ROOT = 'campus'

/** The topic a datalogger publishes its SenML packs on, and the filter of all of them. */
export const senmlTopic = (datalogger: string, root = TOPIC_ROOT): string => `${root}/${datalogger}/senml`
export const senmlTopics = (root = TOPIC_ROOT): string => `${root}/+/senml`
export const DATALOGGER_OF_TOPIC = /^[^/]+\/([^/+#]+)\/senml$/

export type BrokerRole = 'datalogger' | 'ingest'

export interface BrokerUser {
  username: string
  role: BrokerRole
}

/** A username is one topic level (a datalogger's is its id): no separator, wildcard or `$`. */
export const BROKER_USERNAME = /^[A-Za-z0-9_.-]{1,64}$/

/** The topics a user may publish to and the filters it may subscribe to (without `$share/<group>/`). */
export function brokerAccess(user: BrokerUser, root = TOPIC_ROOT): { publish: string[]; subscribe: string[] } {
  return user.role === 'datalogger'
    ? { publish: [senmlTopic(user.username, root)], subscribe: [] }
    : { publish: [], subscribe: [senmlTopics(root)] }
}

export function mayPublish(user: BrokerUser, topic: string, root = TOPIC_ROOT): boolean {
  return brokerAccess(user, root).publish.includes(topic)
}

/** A shared subscription is checked by the filter it shares. */
export function maySubscribe(user: BrokerUser, filter: string, root = TOPIC_ROOT): boolean {
  const plain = filter.startsWith('$share/') ? filter.split('/').slice(2).join('/') : filter
  return brokerAccess(user, root).subscribe.includes(plain)
}

export const clientIdAllowed = (user: BrokerUser, clientId: string): boolean => clientId === user.username

/** A new password: 256 random bits, so the hash's cost is not what keeps it. */
export const generateBrokerPassword = (): string => randomBytes(32).toString('base64url')

const derive = promisify(pbkdf2)
/** Mosquitto's own default is 101; the passwords are random, this only slows a stolen table further. */
const ITERATIONS = 10_000
const SALT_BYTES = 12

/** Mosquitto's password format: `$7$<iterations>$<salt>$<PBKDF2-SHA512>`, base64. */
export async function hashBrokerPassword(password: string, iterations = ITERATIONS): Promise<string> {
  const salt = randomBytes(SALT_BYTES)
  const hash = await derive(password, salt, iterations, 64, 'sha512')
  return `$7$${iterations}$${salt.toString('base64')}$${hash.toString('base64')}`
}

export function parseBrokerHash(stored: string): { iterations: number; salt: Buffer; hash: Buffer } | undefined {
  const [, seven, iterations, salt, hash] = stored.split('$')
  const count = Number(iterations)
  if (seven !== '7' || !Number.isSafeInteger(count) || count < 1 || !salt || !hash) return undefined
  return { iterations: count, salt: Buffer.from(salt, 'base64'), hash: Buffer.from(hash, 'base64') }
}

export async function verifyBrokerPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseBrokerHash(stored)
  if (!parsed) return false
  if (parsed.hash.length !== 64) return false
  const hash = await derive(password, parsed.salt, parsed.iterations, 64, 'sha512')
  return timingSafeEqual(hash, parsed.hash)
}

/**
 * The same rules as Mosquitto's dynamic-security configuration (its plugin refuses a subscription
 * the ACL does not allow; the plain acl file only filters delivery, so a datalogger joining the
 * shared group would still take its share of the stream and drop it): default deny, one role per
 * user, each client bound to its username as client id.
 */
export function mosquittoDynamicSecurity(users: Array<BrokerUser & { password_hash: string }>, root = TOPIC_ROOT) {
  const clients = users.map((user) => {
    const parsed = parseBrokerHash(user.password_hash)
    if (!parsed) throw new Error(`the stored password of ${user.username} is not a $7$ hash`)
    return {
      username: user.username,
      textname: `${user.role} ${user.username}`,
      clientid: user.username,
      password: parsed.hash.toString('base64'),
      salt: parsed.salt.toString('base64'),
      iterations: parsed.iterations,
      roles: [{ rolename: `${user.role}:${user.username}` }],
    }
  })
  const roles = users.map((user) => {
    const access = brokerAccess(user, root)
    return {
      rolename: `${user.role}:${user.username}`,
      acls: [
        ...access.publish.map((topic) => ({ acltype: 'publishClientSend', topic, priority: 0, allow: true })),
        ...access.subscribe.flatMap((topic) => [
          { acltype: 'subscribePattern', topic, priority: 0, allow: true },
          // Mosquitto checks a shared subscription by its whole filter, any group
          { acltype: 'subscribePattern', topic: `$share/+/${topic}`, priority: 0, allow: true },
          { acltype: 'publishClientReceive', topic, priority: 0, allow: true },
        ]),
      ],
    }
  })
  return {
    defaultACLAccess: { publishClientSend: false, publishClientReceive: false, subscribe: false, unsubscribe: true },
    clients,
    groups: [],
    roles,
  }
}
