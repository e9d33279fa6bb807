/** Administration shared by the command line and tests: accounts, applications, tokens. */
import type { Kysely } from 'kysely'
import type { Application, OAuthDB, User } from './db/schema.ts'
import { GRANT_TYPES } from './domain/grant-types.ts'
import { redirectUriProblem } from './domain/redirect-uri.ts'
import { isKnownScope, parseScope, SCOPES } from './domain/scopes.ts'
import { OTP_PURPOSE, sealSecret } from './domain/secret-box.ts'
import { digest, generateClientId, generateSecret } from './domain/secrets.ts'
import { generateTotpSecret } from './domain/totp.ts'
import { hashPassword } from './passwords.ts'
import { insertApplication } from './repositories/applications.ts'
import { insertPersonalAccessToken } from './repositories/personal-access-tokens.ts'
import { findUserByUsername, insertUser } from './repositories/users.ts'

export class AdminError extends Error {
  override name = 'AdminError'
}

const USERNAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$/

export interface CreatedUser {
  user: User
  otpSecret?: string
}

export async function createUser(
  db: Kysely<OAuthDB>,
  input: {
    username: string
    password: string
    email?: string
    name?: string
    admin?: boolean
    with2fa?: boolean
    /** seals the TOTP secret; required with `with2fa` */
    secretKey?: Buffer
  },
): Promise<CreatedUser> {
  if (!USERNAME.test(input.username)) throw new AdminError('username may hold letters, digits, _ . - only')
  if (input.password.length < 8) throw new AdminError('password must have at least 8 characters')
  if (await findUserByUsername(db, input.username)) throw new AdminError(`user ${input.username} already exists`)
  if (input.with2fa && !input.secretKey) throw new AdminError('a secret key is needed to store a TOTP secret')
  const otpSecret = input.with2fa ? generateTotpSecret() : undefined
  const user = await insertUser(db, {
    username: input.username,
    email: input.email ?? null,
    name: input.name ?? input.username,
    password_hash: await hashPassword(input.password),
    otp_secret: otpSecret && input.secretKey ? sealSecret(input.secretKey, otpSecret, OTP_PURPOSE) : null,
    otp_last_step: null,
    admin: input.admin ?? false,
    confirmed_at: new Date(),
    last_sign_in_at: null,
    current_sign_in_at: null,
    last_activity_on: null,
  })
  return otpSecret ? { user, otpSecret } : { user }
}

export function parseScopes(text: string): string[] {
  const scopes = parseScope(text)
  if (scopes.length === 0) throw new AdminError(`scopes must name at least one of: ${SCOPES.join(', ')}`)
  for (const s of scopes) if (!isKnownScope(s)) throw new AdminError(`unknown scope ${s} (known: ${SCOPES.join(', ')})`)
  return scopes
}

export interface CreatedApplication {
  application: Application
  /** shown once; only its digest is stored */
  secret: string | null
}

export async function createApplication(
  db: Kysely<OAuthDB>,
  input: {
    name: string
    redirectUris: string[]
    scopes: string[]
    confidential?: boolean
    trusted?: boolean
    grantTypes?: string[]
    ownerId?: number | null
  },
): Promise<CreatedApplication> {
  if (!input.name.trim()) throw new AdminError('name is required')
  if (input.redirectUris.length === 0) throw new AdminError('at least one redirect URI is required')
  for (const uri of input.redirectUris) {
    const problem = redirectUriProblem(uri)
    if (problem) throw new AdminError(`redirect URI ${uri} ${problem}`)
  }
  for (const g of input.grantTypes ?? []) {
    if (!(GRANT_TYPES as readonly string[]).includes(g)) throw new AdminError(`unknown grant type ${g}`)
  }
  if (input.trusted && input.ownerId != null) throw new AdminError('only instance-wide applications can be trusted')
  const confidential = input.confidential ?? true
  const secret = confidential ? generateSecret('clientSecret') : null
  const application = await insertApplication(db, {
    uid: generateClientId(),
    secret_digest: secret ? digest(secret) : null,
    name: input.name.trim(),
    redirect_uris: input.redirectUris,
    scopes: input.scopes,
    confidential,
    trusted: input.trusted ?? false,
    grant_types: input.grantTypes ?? [...GRANT_TYPES],
    owner_id: input.ownerId ?? null,
  })
  return { application, secret }
}

export async function createPersonalAccessToken(
  db: Kysely<OAuthDB>,
  input: { username: string; name: string; scopes: string[]; expiresAt?: string | null },
): Promise<{ token: string; id: number; expiresAt: string | null }> {
  const user = await findUserByUsername(db, input.username)
  if (!user) throw new AdminError(`no user ${input.username}`)
  if (input.expiresAt && !/^\d{4}-\d{2}-\d{2}$/.test(input.expiresAt)) {
    throw new AdminError('expires must be a date YYYY-MM-DD')
  }
  const token = generateSecret('personalAccessToken')
  const row = await insertPersonalAccessToken(db, {
    digest: digest(token),
    userId: user.id,
    name: input.name,
    scopes: input.scopes,
    expiresAt: input.expiresAt ?? null,
  })
  return { token, id: row.id, expiresAt: input.expiresAt ?? null }
}
