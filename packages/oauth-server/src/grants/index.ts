import { authorizationCodeGrant } from './authorization-code.ts'
import { passwordGrant } from './password.ts'
import { refreshTokenGrant } from './refresh-token.ts'
import type { GrantHandler } from './types.ts'

/** Grant types of the token endpoint; the server switches and each application's list narrow them. */
export const grants: Record<string, GrantHandler> = {
  authorization_code: authorizationCodeGrant,
  password: passwordGrant,
  refresh_token: refreshTokenGrant,
}
