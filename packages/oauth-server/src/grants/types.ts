import type { Application } from '../db/schema.ts'
import { InvalidRequest } from '../errors.ts'
import type { OAuthServices } from '../oauth-app.ts'
import type { TokenResponse } from './issue.ts'

/** What the grants work with. */
export type GrantServices = Pick<OAuthServices, 'db' | 'settings' | 'throttle' | 'changes' | 'openid' | 'audit'>

/** One grant request after the shared steps: allow-listed parameters and the client, if any. */
export interface GrantRequest {
  params: Record<string, string | undefined>
  client: Application | undefined
  ip: string
  /** the key of the request's DPoP proof, when it sent one (RFC 9449 5) */
  dpopJkt: string | undefined
}

export interface GrantHandler {
  /** The parameters this grant reads (RFC 6749 3.2: anything else is ignored). */
  readonly parameters: readonly string[]
  /** Whether the client must identify itself (public) or authenticate (confidential). */
  readonly clientRequired: boolean
  handle(services: GrantServices, request: GrantRequest): Promise<TokenResponse>
}

export function requireParam(params: Record<string, string | undefined>, name: string): string {
  const value = params[name]
  if (value === undefined || value === '') throw new InvalidRequest(`Missing required parameter: ${name}.`)
  return value
}

export const INVALID_GRANT_MESSAGE =
  'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.'
