import { commandFailed, usageError } from '@campus/shared'
import type { Kysely } from 'kysely'
import type { EnergyDatabase } from '../db/schema.ts'
import { isEndpointPattern } from '../domain/api-keys.ts'
import { parseInstant } from '../domain/time.ts'
import { type ApiKeyRecord, createApiKey, listApiKeys, revokeApiKeys } from '../repositories/api-keys.ts'

function describeKey(k: ApiKeyRecord) {
  const now = Date.now()
  const state = k.revoked_at ? 'revoked' : k.expires_at && k.expires_at.getTime() <= now ? 'expired' : 'active'
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    endpoints: k.endpoints,
    state,
    created_at: k.created_at.toISOString(),
    expires_at: k.expires_at?.toISOString() ?? null,
    revoked_at: k.revoked_at?.toISOString() ?? null,
    last_used_at: k.last_used_at?.toISOString() ?? null,
  }
}

export async function keyCreate(
  db: Kysely<EnergyDatabase>,
  input: { name?: string | undefined; endpoints?: string[] | undefined; expires?: string | undefined },
) {
  const name = input.name?.trim()
  if (!name) throw usageError('key:create needs --name NAME')
  const endpoints = input.endpoints?.length ? input.endpoints : ['*']
  for (const pattern of endpoints) {
    if (!isEndpointPattern(pattern)) {
      throw usageError(`--endpoint ${JSON.stringify(pattern)} is not a pattern: use *, /data/pv or /data/* forms`)
    }
  }
  let expiresAt: Date | null = null
  if (input.expires !== undefined) {
    const ms = parseInstant(input.expires)
    if (ms === undefined)
      throw usageError(`--expires ${JSON.stringify(input.expires)} is not a date (YYYY-MM-DD or ISO 8601)`)
    if (ms <= Date.now()) throw usageError('--expires must be in the future')
    expiresAt = new Date(ms)
  }
  const { key, record } = await createApiKey(db, { name, endpoints, expiresAt })
  return { ...describeKey(record), key, note: 'Store the key now: it is shown only once.' }
}

export async function keyList(db: Kysely<EnergyDatabase>) {
  return (await listApiKeys(db)).map(describeKey)
}

export async function keyRevoke(
  db: Kysely<EnergyDatabase>,
  input: { id?: string | undefined; name?: string | undefined },
) {
  if ((input.id === undefined) === (input.name === undefined))
    throw usageError('key:revoke needs --id ID or --name NAME')
  let which: { id: number } | { name: string }
  if (input.id !== undefined) {
    if (!/^\d+$/.test(input.id)) throw usageError('--id must be an integer')
    which = { id: Number(input.id) }
  } else {
    which = { name: input.name as string }
  }
  const revoked = await revokeApiKeys(db, which)
  if (revoked.length === 0) throw commandFailed('no active key matches')
  return { revoked: revoked.map(describeKey) }
}
