import type { ColumnType, Generated, Insertable, Selectable } from 'kysely'

type Timestamp = ColumnType<Date, Date | string, Date | string>
type Defaulted<T> = ColumnType<T, T | undefined, T>

export interface UsersTable {
  id: Generated<number>
  username: string
  email: string | null
  name: string
  password_hash: string
  otp_secret: string | null
  otp_last_step: number | null
  otp_pending_secret: ColumnType<string | null, string | null | undefined, string | null>
  admin: Defaulted<boolean>
  locked: Defaulted<boolean>
  bio: Defaulted<string>
  location: Defaulted<string>
  public_email: Defaulted<string>
  website_url: Defaulted<string>
  organization: Defaulted<string>
  job_title: Defaulted<string>
  created_at: Generated<Date>
  confirmed_at: Timestamp | null
  last_sign_in_at: Timestamp | null
  current_sign_in_at: Timestamp | null
  last_activity_on: ColumnType<Date | null, string | null, string | null>
}

export interface SessionsTable {
  id_digest: Buffer
  user_id: number | null
  pending_user_id: number | null
  created_at: Generated<Date>
  authenticated_at: Timestamp | null
  expires_at: Timestamp
  flash_sealed: ColumnType<string | null, string | null | undefined, string | null>
  /** the challenge of the WebAuthn ceremony under way, answered once */
  webauthn_challenge: ColumnType<string | null, string | null | undefined, string | null>
}

export interface ApplicationsTable {
  id: Generated<number>
  uid: string
  secret_digest: Buffer | null
  name: string
  redirect_uris: string[]
  scopes: string[]
  confidential: boolean
  trusted: Defaulted<boolean>
  /** introspects the access tokens of every client (an instance-wide confidential application only) */
  resource_server: Defaulted<boolean>
  grant_types: Defaulted<string[]>
  /** RFC 9126 5: authorization requests only through /oauth/par */
  require_pushed_authorization_requests: Defaulted<boolean>
  /** RFC 7592: the digest of a self-registered client's registration access token; null for every other */
  registration_token_digest: ColumnType<Buffer | null, Buffer | null | undefined, Buffer | null>
  /** the scopes of ADMINISTRATOR_SCOPES an administrator allowed it (write_energy) */
  administrator_scopes: Defaulted<string[]>
  owner_id: number | null
  created_at: Generated<Date>
  updated_at: Generated<Date>
}

export interface AuthorizationCodesTable {
  id: Generated<number>
  digest: Buffer
  application_id: number
  user_id: number
  redirect_uri: string
  scopes: string[]
  code_challenge: string | null
  code_challenge_method: string | null
  grant_id: string
  created_at: Generated<Date>
  expires_at: Timestamp
  consumed_at: Timestamp | null
  nonce: ColumnType<string | null, string | null | undefined, string | null>
  auth_time: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
  dpop_jkt: ColumnType<string | null, string | null | undefined, string | null>
}

export interface AccessTokensTable {
  id: Generated<number>
  digest: Buffer
  application_id: number | null
  /** null for a token of the application itself (client credentials) */
  user_id: number | null
  scopes: string[]
  grant_id: string
  created_at: Generated<Date>
  expires_at: Timestamp
  revoked_at: Timestamp | null
  dpop_jkt: ColumnType<string | null, string | null | undefined, string | null>
}

export interface RefreshTokensTable {
  id: Generated<number>
  digest: Buffer
  application_id: number | null
  user_id: number
  access_token_id: number
  scopes: string[]
  grant_id: string
  created_at: Generated<Date>
  rotated_at: Timestamp | null
  revoked_at: Timestamp | null
  dpop_jkt: ColumnType<string | null, string | null | undefined, string | null>
}

export interface PersonalAccessTokensTable {
  id: Generated<number>
  digest: Buffer
  user_id: number
  name: string
  scopes: string[]
  created_at: Generated<Date>
  expires_at: ColumnType<Date | null, string | null, string | null>
  revoked_at: Timestamp | null
  last_used_at: Timestamp | null
}

export interface ConsentsTable {
  user_id: number
  application_id: number
  scopes: string[]
  created_at: Generated<Date>
  updated_at: Generated<Date>
}

export interface SigningKeysTable {
  kid: string
  alg: string
  public_jwk: ColumnType<Record<string, unknown>, string, string>
  private_jwk_sealed: string
  created_at: Generated<Date>
  retired_at: Timestamp | null
}

export interface RecoveryCodesTable {
  id: Generated<number>
  user_id: number
  digest: Buffer
  created_at: Generated<Date>
  used_at: Timestamp | null
}

/** A device authorization (RFC 8628): both codes as digests, the person's decision, one redemption. */
export interface DeviceGrantsTable {
  id: Generated<number>
  device_code_digest: Buffer
  user_code_digest: Buffer
  application_id: number
  scopes: string[]
  created_at: Generated<Date>
  expires_at: Timestamp
  poll_interval: number
  last_polled_at: Timestamp | null
  user_id: number | null
  decision: 'approved' | 'denied' | null
  consumed_at: Timestamp | null
}

/** A pushed authorization request (RFC 9126): its request_uri as a digest, the parameters it stands for. */
export interface PushedAuthorizationRequestsTable {
  id: Generated<number>
  digest: Buffer
  application_id: number
  parameters: ColumnType<Record<string, string>, string, string>
  dpop_jkt: string | null
  created_at: Generated<Date>
  expires_at: Timestamp
  opened_at: Timestamp | null
  consumed_at: Timestamp | null
}

/** An initial access token (RFC 7591 3): registers at most `uses_left` clients before it expires. */
export interface InitialAccessTokensTable {
  id: Generated<number>
  digest: Buffer
  name: string
  uses_left: number
  created_at: Generated<Date>
  expires_at: Timestamp
}

/** One audit event (GitLab's AuditEvent): nothing secret is ever stored in it. */
export interface AuditEventsTable {
  id: Generated<number>
  author_id: number | null
  author_name: string
  entity_type: string
  entity_id: number | null
  entity_path: string | null
  event_name: string
  target_type: string | null
  target_id: string | null
  target_details: string | null
  custom_message: string
  ip_address: string | null
  created_at: Generated<Date>
}

/** A passkey (WebAuthn credential) of a user: its public key, never a secret. */
export interface PasskeysTable {
  id: Generated<number>
  user_id: number
  credential_id: string
  public_key: Buffer
  sign_count: Defaulted<number>
  transports: Defaulted<string[]>
  name: string
  created_at: Generated<Date>
  last_used_at: Timestamp | null
}

export interface OAuthDB {
  users: UsersTable
  sessions: SessionsTable
  applications: ApplicationsTable
  authorization_codes: AuthorizationCodesTable
  access_tokens: AccessTokensTable
  refresh_tokens: RefreshTokensTable
  personal_access_tokens: PersonalAccessTokensTable
  consents: ConsentsTable
  signing_keys: SigningKeysTable
  recovery_codes: RecoveryCodesTable
  device_grants: DeviceGrantsTable
  pushed_authorization_requests: PushedAuthorizationRequestsTable
  initial_access_tokens: InitialAccessTokensTable
  audit_events: AuditEventsTable
  passkeys: PasskeysTable
}

export type User = Selectable<UsersTable>
export type NewUser = Insertable<UsersTable>
export type Application = Selectable<ApplicationsTable>
export type AuthorizationCode = Selectable<AuthorizationCodesTable>
export type AccessToken = Selectable<AccessTokensTable>
export type PersonalAccessToken = Selectable<PersonalAccessTokensTable>
