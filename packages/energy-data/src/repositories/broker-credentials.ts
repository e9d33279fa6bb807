import type { Kysely } from 'kysely'
import type { EnergyDatabase } from '../db/schema.ts'
import type { BrokerRole, BrokerUser } from '../domain/broker-access.ts'
import { generateBrokerPassword, hashBrokerPassword } from '../domain/broker-access.ts'

export interface StoredBrokerCredential extends BrokerUser {
  password_hash: string
}

/**
 * Issues a user's credential, replacing the one it had (the old password stops working at the
 * next connection); the clear password is returned here once and never stored.
 */
export async function issueBrokerCredential(
  db: Kysely<EnergyDatabase>,
  input: { username: string; role: BrokerRole; password?: string | undefined },
): Promise<{ username: string; password: string }> {
  const password = input.password ?? generateBrokerPassword()
  const passwordHash = await hashBrokerPassword(password)
  const row = await db
    .insertInto('broker_credentials')
    .values({
      username: input.username,
      role: input.role,
      datalogger_id: input.role === 'datalogger' ? input.username : null,
      password_hash: passwordHash,
    })
    .onConflict((oc) =>
      oc
        .column('username')
        .doUpdateSet({ password_hash: passwordHash, issued_at: new Date() })
        // a datalogger's name is never taken over by an ingest user, nor the reverse
        .where('broker_credentials.role', '=', input.role),
    )
    .returning('username')
    .executeTakeFirst()
  if (!row) throw new Error(`${input.username} is already a broker user of another kind`)
  return { username: input.username, password }
}

export function findBrokerCredential(
  db: Kysely<EnergyDatabase>,
  username: string,
): Promise<StoredBrokerCredential | undefined> {
  return db
    .selectFrom('broker_credentials')
    .select(['username', 'role', 'password_hash'])
    .where('username', '=', username)
    .executeTakeFirst()
}

export function listBrokerCredentials(db: Kysely<EnergyDatabase>): Promise<StoredBrokerCredential[]> {
  return db.selectFrom('broker_credentials').select(['username', 'role', 'password_hash']).orderBy('username').execute()
}
