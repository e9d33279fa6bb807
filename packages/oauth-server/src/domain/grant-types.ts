/**
 * The grants an application may use, kept as its grant list. The password grant's presence in
 * it is GitLab's per-application `ropc_enabled` switch: one fact, one place.
 */
export const GRANT_TYPES = ['authorization_code', 'implicit', 'password', 'refresh_token'] as const

/** GitLab's `ropc_enabled`: the application may use the resource owner password credentials grant. */
export const ropcEnabled = (application: { grant_types: readonly string[] }): boolean =>
  application.grant_types.includes('password')

/** The grant list with the password grant switched on or off, in the canonical order. */
export function withRopc(grants: readonly string[], enabled: boolean): string[] {
  return GRANT_TYPES.filter((g) => (g === 'password' ? enabled : grants.includes(g)))
}
