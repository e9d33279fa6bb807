import type { OAuthSettings } from '../config.ts'
import { DEVICE_CODE_GRANT } from '../domain/grant-types.ts'
import { authorizationCodeGrant } from './authorization-code.ts'
import { clientCredentialsGrant } from './client-credentials.ts'
import { deviceCodeGrant } from './device-code.ts'
import { passwordGrant } from './password.ts'
import { refreshTokenGrant } from './refresh-token.ts'
import type { GrantHandler } from './types.ts'

/** Grant types of the token endpoint; the server switches and each application's list narrow them. */
export const grants: Record<string, GrantHandler> = {
  authorization_code: authorizationCodeGrant,
  password: passwordGrant,
  refresh_token: refreshTokenGrant,
  client_credentials: clientCredentialsGrant,
  [DEVICE_CODE_GRANT]: deviceCodeGrant,
}

/** Grant types this server offers now (the password grant can be switched off). */
export function enabledGrantTypes(settings: OAuthSettings): string[] {
  return Object.keys(grants).filter((g) => g !== 'password' || settings.passwordGrant)
}
