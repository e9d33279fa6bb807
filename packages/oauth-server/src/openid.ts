/**
 * OpenID Connect on top of the authorization code flow: id_tokens signed with RS256 (jose), the
 * JWKS, and the claims of a user. Signing keys live in the database, their private halves sealed
 * with the server key; an instance that cannot open any key (another secret key) makes its own,
 * and every key in service is published.
 */
import { randomBytes } from 'node:crypto'
import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose'
import type { Kysely } from 'kysely'
import type { OAuthDB, User } from './db/schema.ts'
import { ID_TOKEN_TTL } from './domain/lifetimes.ts'
import { openSecret, sealSecret } from './domain/secret-box.ts'
import { insertSigningKey, listSigningKeys } from './repositories/signing-keys.ts'

const ALG = 'RS256'
const KEY_PURPOSE = 'signing_keys.private_jwk'

interface Signer {
  kid: string
  key: CryptoKey
}

export class OpenIdKeys {
  readonly #db: Kysely<OAuthDB>
  readonly #secretKey: Buffer
  #signer: Promise<Signer> | undefined

  constructor(db: Kysely<OAuthDB>, secretKey: Buffer) {
    this.#db = db
    this.#secretKey = secretKey
  }

  async jwks(): Promise<{ keys: JWK[] }> {
    await this.signer()
    const rows = await listSigningKeys(this.#db)
    return { keys: rows.map((r) => ({ ...(r.public_jwk as JWK), kid: r.kid, alg: r.alg, use: 'sig' })) }
  }

  signer(): Promise<Signer> {
    this.#signer ??= this.#loadOrCreate().catch((error: unknown) => {
      this.#signer = undefined
      throw error
    })
    return this.#signer
  }

  async #loadOrCreate(): Promise<Signer> {
    for (const row of await listSigningKeys(this.#db)) {
      try {
        const jwk = JSON.parse(openSecret(this.#secretKey, row.private_jwk_sealed, KEY_PURPOSE)) as JWK
        return { kid: row.kid, key: (await importJWK(jwk, row.alg)) as CryptoKey }
      } catch {
        // sealed under another server key: not ours to use
      }
    }
    const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true, modulusLength: 2048 })
    const kid = randomBytes(12).toString('base64url')
    const publicJwk = await exportJWK(publicKey)
    const privateJwk = await exportJWK(privateKey)
    await insertSigningKey(this.#db, {
      kid,
      alg: ALG,
      publicJwk: publicJwk as Record<string, unknown>,
      privateJwkSealed: sealSecret(this.#secretKey, JSON.stringify(privateJwk), KEY_PURPOSE),
    })
    return { kid, key: privateKey }
  }

  /** An id_token for `user` (OpenID Connect Core 2): sub is the user id, aud the client id. */
  async idToken(input: {
    issuer: string
    clientId: string
    user: Pick<User, 'id' | 'username' | 'name' | 'email' | 'confirmed_at'>
    scopes: string[]
    nonce: string | null
    authTime: Date | null
  }): Promise<string> {
    const { kid, key } = await this.signer()
    const jwt = new SignJWT({
      ...(input.nonce ? { nonce: input.nonce } : {}),
      ...(input.authTime ? { auth_time: Math.floor(input.authTime.getTime() / 1000) } : {}),
      ...userClaims(input.user, input.scopes),
    })
      .setProtectedHeader({ alg: ALG, kid, typ: 'JWT' })
      .setIssuer(input.issuer)
      .setSubject(String(input.user.id))
      .setAudience(input.clientId)
      .setIssuedAt()
      .setExpirationTime(`${ID_TOKEN_TTL}s`)
    return jwt.sign(key)
  }
}

/**
 * Standard claims released by the `profile` and `email` scopes (only what the service has). An
 * address is asserted only once confirmed (OIDC Core 5.1, 5.7: a relying party that links
 * accounts by email must not be handed one anyone could have typed); `email_verified` says which.
 */
export function userClaims(
  user: Pick<User, 'username' | 'name' | 'email' | 'confirmed_at'>,
  scopes: readonly string[],
) {
  const confirmed = user.email !== null && user.confirmed_at !== null ? user.email : undefined
  return {
    ...(scopes.includes('profile')
      ? { name: user.name, nickname: user.username, preferred_username: user.username }
      : {}),
    ...(scopes.includes('email')
      ? { ...(confirmed === undefined ? {} : { email: confirmed }), email_verified: confirmed !== undefined }
      : {}),
  }
}
