import type { Kysely } from 'kysely'
import type { OAuthDB } from '../db/schema.ts'

type Db = Kysely<OAuthDB>

export interface SigningKeyRow {
  kid: string
  alg: string
  public_jwk: Record<string, unknown>
  private_jwk_sealed: string
  created_at: Date
}

/** Keys in service, newest first (their public halves make the JWKS). */
export async function listSigningKeys(db: Db): Promise<SigningKeyRow[]> {
  return db
    .selectFrom('signing_keys')
    .select(['kid', 'alg', 'public_jwk', 'private_jwk_sealed', 'created_at'])
    .where('retired_at', 'is', null)
    .orderBy('created_at', 'desc')
    .execute()
}

export async function insertSigningKey(
  db: Db,
  key: { kid: string; alg: string; publicJwk: Record<string, unknown>; privateJwkSealed: string },
): Promise<void> {
  await db
    .insertInto('signing_keys')
    .values({
      kid: key.kid,
      alg: key.alg,
      public_jwk: JSON.stringify(key.publicJwk),
      private_jwk_sealed: key.privateJwkSealed,
    })
    .execute()
}
