import { randomUUID } from 'node:crypto'
import { retryingConflicts } from '@campus/shared'
import type { Kysely, Transaction } from 'kysely'
import type { OAuthDB } from '../db/schema.ts'
import { ACCESS_TOKEN_TTL } from '../domain/lifetimes.ts'
import { formatScope } from '../domain/scopes.ts'
import { digest, generateSecret } from '../domain/secrets.ts'
import {
  type CodeAttempt,
  type RedeemedCode,
  redeemAuthorizationCode,
  redeemAuthorizationCodes,
} from '../repositories/codes.ts'
import { redeemDeviceGrant } from '../repositories/device-grants.ts'
import { grantSource, insertTokens, type NewTokens, type TokenGrant } from '../repositories/tokens.ts'

/** The token endpoint's success body (RFC 6749 5.1, GitLab's fields). */
export interface TokenResponse {
  access_token: string
  /** DPoP for a token bound to the client's key (RFC 9449 5) */
  token_type: 'Bearer' | 'DPoP'
  expires_in: number
  refresh_token?: string
  scope: string
  created_at: number
  /** OpenID Connect, when the scopes include openid */
  id_token?: string
}

export const newGrantId = (): string => randomUUID()

/** The DPoP keys new tokens are bound to (RFC 9449): none for bearer tokens. */
export interface TokenBinding {
  access: string | null
  refresh: string | null
}

export const BEARER: TokenBinding = { access: null, refresh: null }

/**
 * What a proof of `jkt` at the token endpoint binds (RFC 9449 5): the access token, and the
 * refresh token of a public client only (a confidential client's refresh token is already bound
 * to its credentials). A refresh token bound before stays bound to its key.
 */
export function bindingOf(
  jkt: string | undefined,
  client: { confidential: boolean } | undefined,
  bound?: string | null,
): TokenBinding {
  return {
    access: jkt ?? null,
    refresh: bound ?? (jkt !== undefined && client !== undefined && !client.confidential ? jkt : null),
  }
}

/** New token strings; only their digests are stored. */
export function newTokenValues(refresh: boolean): { accessToken: string; refreshToken: string | undefined } {
  return {
    accessToken: generateSecret('accessToken'),
    refreshToken: refresh ? generateSecret('refreshToken') : undefined,
  }
}

export function tokenResponse(
  values: { accessToken: string; refreshToken: string | undefined },
  scopes: string[],
  createdAt: Date,
  binding: TokenBinding = BEARER,
): TokenResponse {
  return {
    access_token: values.accessToken,
    token_type: binding.access ? 'DPoP' : 'Bearer',
    expires_in: ACCESS_TOKEN_TTL,
    ...(values.refreshToken ? { refresh_token: values.refreshToken } : {}),
    scope: formatScope(scopes),
    created_at: Math.floor(createdAt.getTime() / 1000),
  }
}

/** Fresh token values and the digests that are stored of them. */
function newTokens(refresh: boolean, binding: TokenBinding) {
  const values = newTokenValues(refresh)
  const digests: NewTokens = {
    accessDigest: digest(values.accessToken),
    refreshDigest: values.refreshToken ? digest(values.refreshToken) : null,
    ttlSeconds: ACCESS_TOKEN_TTL,
    accessJkt: binding.access,
    refreshJkt: binding.refresh,
  }
  return { values, digests }
}

/**
 * Issues an access token, and a refresh token when asked, inside the caller's transaction (the
 * password, refresh and implicit grants); `redeemCode` is the same path for a code.
 */
export async function issueTokens(
  db: Kysely<OAuthDB> | Transaction<OAuthDB>,
  grant: TokenGrant & { refresh: boolean; binding?: TokenBinding },
): Promise<TokenResponse> {
  const binding = grant.binding ?? BEARER
  const { values, digests } = newTokens(grant.refresh, binding)
  const row = await insertTokens(db, grantSource(grant), digests)
  if (!row) throw new Error('the token insert yielded no row')
  return tokenResponse(values, grant.scopes, row.created_at, binding)
}

/**
 * Redemption statements one instance runs at once, at most. One at a time while it is quick: the
 * exchanges arriving meanwhile then make the largest batches, the least work per exchange (about
 * 8 % more exchanges per second than two at a time, docs/PERFORMANCE.md). Another starts beside
 * it once the newest in flight has taken `STALLED_MS` (held by a row lock, say), so one slow
 * statement does not hold up every exchange behind it.
 */
export const REDEMPTIONS_IN_FLIGHT = 4
const STALLED_MS = 50
/** Most codes redeemed by one statement. */
const REDEMPTIONS_PER_STATEMENT = 64

interface PendingRedemption {
  attempt: CodeAttempt
  tokens: NewTokens
  settle(result: Promise<RedeemedCode | undefined>): void
}

/**
 * Group commit of code exchanges. A redemption is one statement and one durable commit: while
 * one is in flight, the exchanges that arrive meanwhile are redeemed together by the next
 * statement (each by the same rules; one round trip, one lock of the parent rows the foreign keys
 * check, one flush of the write-ahead log for all). A lone exchange goes at once, by itself. An
 * answer is given only once its statement has committed; if a shared statement fails, none of it
 * happened and each exchange in it is tried again by itself.
 */
function redemptionQueue(db: Kysely<OAuthDB>) {
  const waiting: PendingRedemption[] = []
  let inFlight = 0
  /** when the newest statement in flight started */
  let newest = 0
  let rechecking = false
  // a deadlock with another writer (the code's application deleted meanwhile) ends one of the two
  const alone = (one: PendingRedemption) =>
    retryingConflicts(() => redeemAuthorizationCode(db, one.attempt, one.tokens))
  async function run(batch: PendingRedemption[]): Promise<void> {
    let results: Array<Promise<RedeemedCode | undefined>>
    try {
      results =
        batch.length === 1
          ? batch.map(alone)
          : (await redeemAuthorizationCodes(db, batch)).map((code) => Promise.resolve(code))
    } catch {
      results = batch.map(alone)
    }
    for (const [i, pending] of batch.entries()) pending.settle(results[i] as Promise<RedeemedCode | undefined>)
    await Promise.allSettled(results)
  }
  function pump(): void {
    while (waiting.length > 0 && inFlight < REDEMPTIONS_IN_FLIGHT) {
      const running = performance.now() - newest
      if (inFlight > 0 && running < STALLED_MS) {
        // look again when the statement in flight would count as stalled, unless it ends first
        if (!rechecking) {
          rechecking = true
          setTimeout(() => {
            rechecking = false
            pump()
          }, STALLED_MS - running)
        }
        return
      }
      const batch = waiting.splice(0, REDEMPTIONS_PER_STATEMENT)
      inFlight++
      newest = performance.now()
      void run(batch).finally(() => {
        inFlight--
        pump()
      })
    }
  }
  return (attempt: CodeAttempt, tokens: NewTokens): Promise<RedeemedCode | undefined> =>
    new Promise((resolve, reject) => {
      waiting.push({ attempt, tokens, settle: (result) => result.then(resolve, reject) })
      pump()
    })
}

const queues = new WeakMap<Kysely<OAuthDB>, ReturnType<typeof redemptionQueue>>()

/** Redeems a code for tokens (with those arriving meanwhile, see `redemptionQueue`); undefined when a binding rule refused it. */
export async function redeemCode(
  db: Kysely<OAuthDB>,
  attempt: CodeAttempt,
  refresh: boolean,
  binding: TokenBinding = BEARER,
): Promise<{ response: TokenResponse; code: RedeemedCode } | undefined> {
  const { values, digests } = newTokens(refresh, binding)
  let redeem = queues.get(db)
  if (!redeem) {
    redeem = redemptionQueue(db)
    queues.set(db, redeem)
  }
  const code = await redeem(attempt, digests)
  return code ? { response: tokenResponse(values, code.scopes, code.createdAt, binding), code } : undefined
}

/**
 * Redeems an approved device grant (RFC 8628 3.5) for tokens in one statement (a refresh token
 * only when `refresh`); undefined when it was not. Says whose they are, for an id_token.
 */
export async function redeemDevice(
  trx: Transaction<OAuthDB>,
  deviceCodeDigest: Buffer,
  refresh: boolean,
  binding: TokenBinding = BEARER,
): Promise<{ response: TokenResponse; userId: number; scopes: string[] } | undefined> {
  const { values, digests } = newTokens(refresh, binding)
  const row = await redeemDeviceGrant(trx, deviceCodeDigest, digests)
  return row
    ? { response: tokenResponse(values, row.scopes, row.created_at, binding), userId: row.user_id, scopes: row.scopes }
    : undefined
}
