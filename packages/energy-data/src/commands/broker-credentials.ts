import { writeFileSync } from 'node:fs'
import { commandFailed, usageError } from '@campus/shared'
import type { Kysely } from 'kysely'
import type { EnergyDatabase } from '../db/schema.ts'
import { BROKER_USERNAME, mosquittoDynamicSecurity, senmlTopic, senmlTopics } from '../domain/broker-access.ts'
import { issueBrokerCredential, listBrokerCredentials } from '../repositories/broker-credentials.ts'

/**
 * `datalogger:credentials`: a datalogger's MQTT credential (`ID`), an ingest instance's
 * (`--ingest NAME`, its password MQTT_PASSWORD when set), or Mosquitto's dynamic-security file
 * written from all of them (`--mosquitto FILE`).
 */
export async function brokerCredentials(
  db: Kysely<EnergyDatabase>,
  input: { id?: string | undefined; ingest?: string | undefined; mosquitto?: string | undefined; root: string },
) {
  const given = [input.id, input.ingest, input.mosquitto].filter((v) => v !== undefined).length
  if (given !== 1) throw usageError('datalogger:credentials takes a datalogger ID, --ingest NAME or --mosquitto FILE')
  if (input.mosquitto !== undefined) {
    const users = await listBrokerCredentials(db)
    // the passwords' hashes are in it: readable by the broker's user only
    writeFileSync(input.mosquitto, `${JSON.stringify(mosquittoDynamicSecurity(users, input.root), null, 2)}\n`, {
      mode: 0o600,
    })
    return {
      file: input.mosquitto,
      dataloggers: users.filter((u) => u.role === 'datalogger').length,
      ingest: users.filter((u) => u.role === 'ingest').map((u) => u.username),
    }
  }
  const username = (input.id ?? input.ingest) as string
  if (!BROKER_USERNAME.test(username))
    throw usageError(`${JSON.stringify(username)} is not a broker username (A-Z a-z 0-9 _ . -)`)
  if (input.id !== undefined) {
    const known = await db.selectFrom('dataloggers').select('id').where('id', '=', username).executeTakeFirst()
    if (!known) throw commandFailed(`no datalogger ${username}`)
  }
  const role = input.id !== undefined ? 'datalogger' : 'ingest'
  const password = role === 'ingest' ? process.env.MQTT_PASSWORD || undefined : undefined
  const issued = await issueBrokerCredential(db, { username, role, password }).catch((error: Error) => {
    throw commandFailed(error.message)
  })
  return {
    ...issued,
    // the broker takes this client id only: a client's id is its username
    client_id: username,
    role,
    ...(role === 'datalogger' ? { publish: senmlTopic(username, input.root) } : { subscribe: senmlTopics(input.root) }),
  }
}
