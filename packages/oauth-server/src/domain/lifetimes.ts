/** Lifetimes in seconds (GitLab's values; sessions are ours). */
export const ACCESS_TOKEN_TTL = 7200
export const AUTHORIZATION_CODE_TTL = 600
export const SESSION_TTL = 12 * 3600
/** A browser that has not finished signing in keeps its session this long. */
export const ANONYMOUS_SESSION_TTL = 3600
