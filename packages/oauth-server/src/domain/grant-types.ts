/**
 * The grants an application may use, kept as its grant list. Three of them are per-application
 * switches, each its presence in that list (one fact, one place): the password grant (GitLab's
 * `ropc_enabled`), client credentials (RFC 6749 4.4, confidential applications only) and the
 * device authorization grant (RFC 8628).
 */
/** RFC 8628 3.4: the device authorization grant's type at the token endpoint. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

export const GRANT_TYPES = [
  'authorization_code',
  'implicit',
  'password',
  'refresh_token',
  'client_credentials',
  DEVICE_CODE_GRANT,
] as const

/** The switches an application's owner turns on and off. */
export type GrantSwitch = 'password' | 'client_credentials' | typeof DEVICE_CODE_GRANT

/** A new application's grants unless told otherwise: all but client credentials and the device grant. */
export const DEFAULT_GRANT_TYPES: readonly string[] = GRANT_TYPES.filter(
  (g) => g !== 'client_credentials' && g !== DEVICE_CODE_GRANT,
)

export const grantEnabled = (application: { grant_types: readonly string[] }, grant: GrantSwitch): boolean =>
  application.grant_types.includes(grant)

/** GitLab's `ropc_enabled`: the application may use the resource owner password credentials grant. */
export const ropcEnabled = (application: { grant_types: readonly string[] }): boolean =>
  grantEnabled(application, 'password')

/** The grant list with one switch on or off, in the canonical order. */
export function withGrant(grants: readonly string[], grant: GrantSwitch, enabled: boolean): string[] {
  return GRANT_TYPES.filter((g) => (g === grant ? enabled : grants.includes(g)))
}

/** The grant list with the password grant switched on or off. */
export const withRopc = (grants: readonly string[], enabled: boolean): string[] =>
  withGrant(grants, 'password', enabled)
