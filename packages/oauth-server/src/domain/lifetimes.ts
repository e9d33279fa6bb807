/** Lifetimes in seconds (GitLab's values; sessions are ours). */
export const ACCESS_TOKEN_TTL = 7200
export const AUTHORIZATION_CODE_TTL = 600
/** RFC 9126 2.2: a pushed request's request_uri must be opened this soon (node-oidc-provider's 60 s) */
export const PUSHED_REQUEST_TTL = 60
export const SESSION_TTL = 12 * 3600
/** A browser that has not finished signing in keeps its session this long. */
export const ANONYMOUS_SESSION_TTL = 3600
/** id_tokens live as long as the access token issued with them. */
export const ID_TOKEN_TTL = ACCESS_TOKEN_TTL
/** RFC 8628 3.2: how long a device's codes are good for, and the least wait between polls (Doorkeeper's defaults). */
export const DEVICE_CODE_TTL = 300
export const DEVICE_POLL_INTERVAL = 5
