/**
 * DPoP proofs (RFC 9449 4.3), checked one way by every service that takes DPoP: the
 * authorization server at its token and PAR endpoints, each resource server (`/api/v4`, userinfo,
 * the data API, the ingest service) before it trusts a bound token. `jose` verifies the JWS with
 * the key in its header and computes that key's thumbprint (RFC 7638), which is what a token is
 * bound to (`cnf.jkt`).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { calculateJwkThumbprint, EmbeddedJWK, errors, type JWK, jwtVerify } from 'jose'
import type { OnceStore } from '../limits/once.ts'

/** The asymmetric algorithms a proof may be signed with (`dpop_signing_alg_values_supported`). */
export const DPOP_ALGORITHMS = [
  'ES256',
  'ES384',
  'ES512',
  'PS256',
  'PS384',
  'PS512',
  'RS256',
  'RS384',
  'RS512',
  'EdDSA',
]

/** How far a proof's `iat` may stray from this server's clock, either way. */
export const DPOP_IAT_WINDOW_SECONDS = 60
/** A `jti` is remembered for as long as a proof carrying it could still be accepted. */
const REPLAY_SECONDS = 2 * DPOP_IAT_WINDOW_SECONDS
/** Server nonces change this often; the one before is still taken. */
const NONCE_PERIOD_SECONDS = 300
/** Far beyond a proof with an RSA-4096 key (about 1.5 KB): a larger header is not read. */
const MAX_PROOF_LENGTH = 8192
const MAX_JTI_LENGTH = 256

export type DpopErrorCode = 'invalid_dpop_proof' | 'use_dpop_nonce'

/** A proof refused, with the RFC 9449 error code; `use_dpop_nonce` comes with the nonce to use. */
export class DpopProofError extends Error {
  readonly code: DpopErrorCode
  readonly nonce: string | undefined

  constructor(code: DpopErrorCode, message: string, nonce?: string) {
    super(message)
    this.code = code
    this.nonce = nonce
  }
}

/** The request a proof must be made for. */
export interface ProofContext {
  /** The `DPoP` header(s) as received. */
  proof: string | string[] | undefined
  method: string
  /** The absolute URL the request was sent to (its query and fragment are not compared). */
  url: string
  /** At a resource server: the access token the proof must name (`ath`). */
  accessToken?: string | undefined
}

export interface DpopProofs {
  /** The thumbprint of the key that signed a valid proof for this request; else DpopProofError. */
  verify(context: ProofContext): Promise<{ jkt: string }>
  /** The nonce to send in `DPoP-Nonce`; undefined when this server asks for none. */
  nonce(): string | undefined
}

export interface DpopOptions {
  /** Where used `jti`s are remembered (Redis across instances). */
  once: OnceStore
  /** Key of the server nonces (RFC 9449 8); none: proofs need no nonce. Instances share it. */
  nonceKey?: Buffer | undefined
  now?: () => number
}

const invalid = (message: string) => new DpopProofError('invalid_dpop_proof', message)

/** The `ath` claim of a token: base64url of its SHA-256 (RFC 9449 4.2). */
export const accessTokenHash = (token: string): string => createHash('sha256').update(token).digest('base64url')

/** Scheme, host, port and path, normalized by the URL parser (RFC 9449 4.3 step 9); undefined if not a URL. */
function comparable(url: string): string | undefined {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    return undefined
  }
}

function equalText(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

export function dpopProofs(options: DpopOptions): DpopProofs {
  const now = options.now ?? Date.now
  const nonceAt = (period: number) =>
    createHmac('sha256', options.nonceKey as Buffer)
      .update(`dpop-nonce:${period}`)
      .digest('base64url')
  const period = () => Math.floor(now() / 1000 / NONCE_PERIOD_SECONDS)
  const nonce = () => (options.nonceKey ? nonceAt(period()) : undefined)
  const nonceValid = (value: unknown) =>
    typeof value === 'string' && [period(), period() - 1].some((p) => equalText(value, nonceAt(p)))

  async function verify(context: ProofContext): Promise<{ jkt: string }> {
    const { proof } = context
    if (Array.isArray(proof)) throw invalid('More than one DPoP header.')
    if (proof === undefined || proof === '') throw invalid('The DPoP header is missing.')
    if (proof.length > MAX_PROOF_LENGTH) throw invalid('The DPoP proof is too large.')
    let payload: Record<string, unknown>
    let jwk: JWK
    try {
      const verified = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: DPOP_ALGORITHMS })
      payload = verified.payload
      jwk = verified.protectedHeader.jwk as JWK
    } catch (error) {
      if (error instanceof errors.JOSEError) throw invalid(`The DPoP proof is not valid: ${error.message}`)
      throw error
    }
    if (typeof payload.jti !== 'string' || payload.jti === '' || payload.jti.length > MAX_JTI_LENGTH) {
      throw invalid('The DPoP proof has no valid jti.')
    }
    if (payload.htm !== context.method) throw invalid('The DPoP proof was made for another HTTP method (htm).')
    const htu = typeof payload.htu === 'string' ? comparable(payload.htu) : undefined
    if (htu === undefined || htu !== comparable(context.url)) {
      throw invalid('The DPoP proof was made for another URL (htu).')
    }
    if (typeof payload.iat !== 'number') throw invalid('The DPoP proof has no iat.')
    if (Math.abs(payload.iat - now() / 1000) > DPOP_IAT_WINDOW_SECONDS) {
      throw invalid('The DPoP proof was not issued within the acceptable window (iat).')
    }
    if (context.accessToken !== undefined) {
      if (typeof payload.ath !== 'string' || !equalText(payload.ath, accessTokenHash(context.accessToken))) {
        throw invalid('The DPoP proof was made for another access token (ath).')
      }
    }
    if (options.nonceKey && !nonceValid(payload.nonce)) {
      throw new DpopProofError('use_dpop_nonce', 'Authorization server requires nonce in DPoP proof.', nonce())
    }
    const jkt = await calculateJwkThumbprint(jwk, 'sha256')
    if (!(await options.once.first(`${jkt}:${accessTokenHash(payload.jti)}`, REPLAY_SECONDS))) {
      throw invalid('The DPoP proof was used before (jti).')
    }
    return { jkt }
  }

  return { verify, nonce }
}

/**
 * The one binding rule of a resource (RFC 9449 7.1): a token bound to a key (`cnf.jkt`) is taken
 * only with a proof of that key, and a token bound to none is no DPoP token. `proofKey` is the key
 * of the request's proof, undefined when it came as a bearer token. Undefined when it may be used.
 */
export function bindingRefusal(
  boundTo: string | null | undefined,
  proofKey: string | undefined,
): { code: 'invalid_token' | 'invalid_dpop_proof'; description: string } | undefined {
  if (!boundTo) {
    return proofKey === undefined
      ? undefined
      : {
          code: 'invalid_token',
          description: 'The access token is not bound to a DPoP key: send it as a Bearer token.',
        }
  }
  if (proofKey === undefined) {
    return {
      code: 'invalid_token',
      description: 'The access token is bound to a DPoP key: send it as Authorization: DPoP with a DPoP proof.',
    }
  }
  return proofKey === boundTo
    ? undefined
    : {
        code: 'invalid_dpop_proof',
        description: 'The DPoP proof is signed by another key than the access token is bound to.',
      }
}

/**
 * The `WWW-Authenticate` challenge of a resource server taking DPoP (RFC 9449 7.1): the
 * algorithms, and the error when there is one.
 */
export function dpopChallenge(error?: { code: string; description: string }): string {
  const params = [`algs="${DPOP_ALGORITHMS.join(' ')}"`]
  if (error) {
    params.push(`error="${error.code}"`, `error_description="${error.description.replace(/["\\]/g, '')}"`)
  }
  return `DPoP ${params.join(', ')}`
}
