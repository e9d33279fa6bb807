import { type Kysely, sql } from 'kysely'
import type { EnergyDatabase } from '../db/schema.ts'
import { digestApiKey, displayPrefix, generateApiKey } from '../domain/api-keys.ts'

export interface ApiKeyRecord {
  id: number
  name: string
  prefix: string
  endpoints: string[]
  created_at: Date
  expires_at: Date | null
  revoked_at: Date | null
  last_used_at: Date | null
}

const COLUMNS = ['id', 'name', 'prefix', 'endpoints', 'created_at', 'expires_at', 'revoked_at', 'last_used_at'] as const

/** Creates a key; the clear key is returned here once and never stored. */
export async function createApiKey(
  db: Kysely<EnergyDatabase>,
  input: { name: string; endpoints: string[]; expiresAt?: Date | null },
): Promise<{ key: string; record: ApiKeyRecord }> {
  const key = generateApiKey()
  const record = await db
    .insertInto('api_keys')
    .values({
      name: input.name,
      digest: digestApiKey(key),
      prefix: displayPrefix(key),
      endpoints: input.endpoints,
      expires_at: input.expiresAt ?? null,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow()
  return { key, record }
}

export function listApiKeys(db: Kysely<EnergyDatabase>): Promise<ApiKeyRecord[]> {
  return db.selectFrom('api_keys').select(COLUMNS).orderBy('id').execute()
}

/** Revokes by id or by name (every live key of that name). Returns the revoked keys. */
export function revokeApiKeys(db: Kysely<EnergyDatabase>, which: { id: number } | { name: string }) {
  return db
    .updateTable('api_keys')
    .set({ revoked_at: sql`now()` })
    .where('revoked_at', 'is', null)
    .where((eb) => ('id' in which ? eb('id', '=', which.id) : eb('name', '=', which.name)))
    .returning(COLUMNS)
    .execute() as Promise<ApiKeyRecord[]>
}

/** The key with this digest, whatever its state: the caller decides what expired or revoked means. */
export function findApiKeyByDigest(db: Kysely<EnergyDatabase>, digest: Buffer): Promise<ApiKeyRecord | undefined> {
  return db.selectFrom('api_keys').select(COLUMNS).where('digest', '=', digest).executeTakeFirst()
}

/** Bookkeeping at most once a minute per key, so reads stay reads. */
export async function touchApiKey(db: Kysely<EnergyDatabase>, id: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: sql`now()` })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`)]),
    )
    .execute()
}
