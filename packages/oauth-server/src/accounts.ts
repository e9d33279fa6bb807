/**
 * Creating accounts, applications and personal access tokens: the rules each must pass, in one
 * place for the command line, the sign-up page and the profile pages. A refusal lists every
 * problem (the pages show them all with the input kept; the command line prints them).
 */
import type { Kysely } from 'kysely'
import type { Application, OAuthDB, User } from './db/schema.ts'
import { DEFAULT_GRANT_TYPES, GRANT_TYPES } from './domain/grant-types.ts'
import { redirectUriProblem } from './domain/redirect-uri.ts'
import { ADMINISTRATOR_SCOPES, isKnownScope, SCOPES, scopesNeedingAdministrator } from './domain/scopes.ts'
import { OTP_PURPOSE, sealSecret } from './domain/secret-box.ts'
import { digest, generateClientId, generateSecret } from './domain/secrets.ts'
import { generateTotpSecret } from './domain/totp.ts'
import { hashPassword } from './passwords.ts'
import { insertApplication } from './repositories/applications.ts'
import { insertPersonalAccessToken } from './repositories/personal-access-tokens.ts'
import { findUserByEmail, findUserByUsername, insertUser } from './repositories/users.ts'

/** One thing wrong with the input (`invalid`) or in the way of it (`conflict`: taken, unknown). */
export interface Problem {
  field: string
  /** Lower-case sentence without a final stop: pages capitalise it, the command line prints it. */
  message: string
  conflict?: boolean
}

export class AccountError extends Error {
  override name = 'AccountError'
  readonly problems: readonly Problem[]

  constructor(problems: Problem[]) {
    super(problems.map((p) => p.message).join('; '))
    this.problems = problems
  }

  /** Only conflicts (the input itself was fine). */
  get conflict(): boolean {
    return this.problems.every((p) => p.conflict)
  }
}

function refuseIf(problems: Problem[]): void {
  if (problems.length) throw new AccountError(problems)
}

const USERNAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$/
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const MIN_PASSWORD = 8
const MAX_NAME = 255

function scopeProblems(scopes: readonly string[]): Problem[] {
  if (scopes.length === 0) return [{ field: 'scopes', message: 'select at least one scope' }]
  return scopes
    .filter((s) => !isKnownScope(s))
    .map((s) => ({ field: 'scopes', message: `the scope ${s} is unknown (known: ${SCOPES.join(', ')})` }))
}

function nameProblems(name: string, label: string): Problem[] {
  if (!name.trim()) return [{ field: 'name', message: `${label} is required` }]
  if (name.length > MAX_NAME) {
    return [{ field: 'name', message: `${label} is too long (at most ${MAX_NAME} characters)` }]
  }
  return []
}

export interface CreatedUser {
  user: User
  otpSecret?: string
}

/** What keeps an account from being created: the username's form and freedom, the email's, the password's length. */
export async function userProblems(
  db: Kysely<OAuthDB>,
  input: { username: string; password: string; email?: string | undefined },
): Promise<Problem[]> {
  const email = input.email || undefined
  const problems: Problem[] = []
  if (!USERNAME.test(input.username)) {
    problems.push({ field: 'username', message: 'username may hold letters, digits, _ . - only' })
  } else if (await findUserByUsername(db, input.username)) {
    problems.push({ field: 'username', message: `user ${input.username} already exists`, conflict: true })
  }
  if (email !== undefined) {
    if (!EMAIL.test(email)) problems.push({ field: 'email', message: 'email is not a valid address' })
    else if (await findUserByEmail(db, email)) {
      problems.push({ field: 'email', message: 'email is already taken', conflict: true })
    }
  }
  if (input.password.length < MIN_PASSWORD) {
    problems.push({ field: 'password', message: `password must have at least ${MIN_PASSWORD} characters` })
  }
  return problems
}

export async function createUser(
  db: Kysely<OAuthDB>,
  input: {
    username: string
    password: string
    email?: string | undefined
    name?: string | undefined
    admin?: boolean
    with2fa?: boolean
    /** seals the TOTP secret; required with `with2fa` */
    secretKey?: Buffer
    /**
     * Whether the email address is known to be the user's (default: yes, an administrator made
     * the account); a self-service sign-up's is not, and is asserted to no client until it is.
     */
    emailConfirmed?: boolean
  },
): Promise<CreatedUser> {
  if (input.with2fa && !input.secretKey) throw new Error('a secret key is needed to store a TOTP secret')
  const email = input.email || undefined
  const problems = await userProblems(db, input)
  refuseIf(problems)
  const otpSecret = input.with2fa ? generateTotpSecret() : undefined
  const user = await insertUser(db, {
    username: input.username,
    email: email ?? null,
    name: input.name || input.username,
    password_hash: await hashPassword(input.password),
    otp_secret: otpSecret && input.secretKey ? sealSecret(input.secretKey, otpSecret, OTP_PURPOSE) : null,
    otp_last_step: null,
    admin: input.admin ?? false,
    confirmed_at: (input.emailConfirmed ?? true) ? new Date() : null,
    last_sign_in_at: null,
    current_sign_in_at: null,
    last_activity_on: null,
  })
  return otpSecret ? { user, otpSecret } : { user }
}

export interface ApplicationInput {
  name: string
  redirectUris: string[]
  scopes: string[]
  grantTypes?: string[]
  trusted?: boolean
  ownerId?: number | null
  /** default: confidential */
  confidential?: boolean
  /** RFC 7592: a client registering itself gets a registration access token (its digest) */
  registrationTokenDigest?: Buffer
  /**
   * The ADMINISTRATOR_SCOPES the one saving it may give: all for an administrator, for a user those
   * an administrator already allowed the application. Unset: all for an instance-wide application
   * (only an administrator or the operator makes one; an open registration never asks for them),
   * none for a user's.
   */
  administratorScopes?: readonly string[]
}

/** The administrator scopes a user may give: all when an administrator, else those an administrator already allowed. */
export const administratorScopesOf = (user: { admin: boolean }, allowed: readonly string[] = []): readonly string[] =>
  user.admin ? ADMINISTRATOR_SCOPES : allowed

/** The administrator scopes an application may hold, as saved by whoever saves it. */
export const allowedAdministratorScopes = (input: ApplicationInput): readonly string[] =>
  input.administratorScopes ?? (input.ownerId == null ? ADMINISTRATOR_SCOPES : [])

function administratorScopeProblems(scopes: readonly string[], allowed: readonly string[]): Problem[] {
  return scopesNeedingAdministrator(scopes, allowed).map((s) => ({
    field: 'scopes',
    message: `the scope ${s} is given by an administrator only`,
  }))
}

/** What keeps an application (new or changed) from being saved. */
export function applicationProblems(input: ApplicationInput): Problem[] {
  const problems = nameProblems(input.name, 'name')
  if (input.redirectUris.length === 0) {
    problems.push({ field: 'redirect_uris', message: 'at least one redirect URI is required' })
  }
  for (const uri of input.redirectUris) {
    const problem = redirectUriProblem(uri)
    if (problem) problems.push({ field: 'redirect_uris', message: `redirect URI ${uri} ${problem}` })
  }
  problems.push(...scopeProblems(input.scopes))
  problems.push(...administratorScopeProblems(input.scopes, allowedAdministratorScopes(input)))
  for (const g of input.grantTypes ?? []) {
    if (!(GRANT_TYPES as readonly string[]).includes(g)) {
      problems.push({ field: 'grant_types', message: `unknown grant type ${g}` })
    }
  }
  if (input.confidential === false && input.grantTypes?.includes('client_credentials')) {
    problems.push({
      field: 'client_credentials',
      message: 'client credentials are for confidential applications only',
    })
  }
  if (input.trusted && input.ownerId != null) {
    problems.push({ field: 'trusted', message: 'only instance-wide applications can be trusted' })
  }
  return problems
}

export interface CreatedApplication {
  application: Application
  /** shown once; only its digest is stored */
  secret: string | null
}

export async function createApplication(db: Kysely<OAuthDB>, input: ApplicationInput): Promise<CreatedApplication> {
  refuseIf(applicationProblems(input))
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
    grant_types: input.grantTypes ?? [...DEFAULT_GRANT_TYPES],
    owner_id: input.ownerId ?? null,
    registration_token_digest: input.registrationTokenDigest ?? null,
    administrator_scopes: input.scopes.filter((s) => allowedAdministratorScopes(input).includes(s)),
  })
  return { application, secret }
}

export interface TokenInput {
  name: string
  scopes: string[]
  /** YYYY-MM-DD; none or null: no expiry */
  expiresAt?: string | null | undefined
  /** The ADMINISTRATOR_SCOPES it may hold: all when an administrator (or the operator) makes it; unset, none. */
  administratorScopes?: readonly string[]
}

/** What keeps a personal access token from being made; `today` is YYYY-MM-DD. */
export function tokenProblems(input: TokenInput, today: string = new Date().toISOString().slice(0, 10)): Problem[] {
  const problems = nameProblems(input.name, 'token name')
  if (input.expiresAt) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(input.expiresAt) || Number.isNaN(Date.parse(input.expiresAt))) {
      problems.push({ field: 'expires_at', message: 'expiration date must be a date (YYYY-MM-DD)' })
    } else if (input.expiresAt <= today) {
      problems.push({ field: 'expires_at', message: 'expiration date must be in the future' })
    }
  }
  problems.push(...scopeProblems(input.scopes))
  problems.push(...administratorScopeProblems(input.scopes, input.administratorScopes ?? []))
  return problems
}

/** A personal access token of a user (by id or username); the value is returned once, only its digest is stored. */
export async function createPersonalAccessToken(
  db: Kysely<OAuthDB>,
  input: TokenInput & ({ userId: number } | { username: string }),
): Promise<{ token: string; id: number; expiresAt: string | null }> {
  const problems = tokenProblems(input)
  let userId = 'userId' in input ? input.userId : undefined
  if ('username' in input) {
    userId = (await findUserByUsername(db, input.username))?.id
    if (userId === undefined) problems.push({ field: 'username', message: `no user ${input.username}`, conflict: true })
  }
  refuseIf(problems)
  const token = generateSecret('personalAccessToken')
  const expiresAt = input.expiresAt || null
  const row = await insertPersonalAccessToken(db, {
    digest: digest(token),
    userId: userId as number,
    name: input.name.trim(),
    scopes: input.scopes,
    expiresAt,
  })
  return { token, id: row.id, expiresAt }
}

/** A problem as a page shows it: a sentence. */
export const sentence = (problem: Problem): string =>
  `${problem.message.charAt(0).toUpperCase()}${problem.message.slice(1)}.`
