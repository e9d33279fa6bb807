/**
 * grant_type=urn:ietf:params:oauth:grant-type:device_code (RFC 8628 3.4-3.5): the device polls
 * with its device code until the person decides. Error codes as the RFC names them:
 * authorization_pending, slow_down (a poll before the interval passed), expired_token,
 * access_denied; a code that is unknown, another client's or already redeemed is invalid_grant.
 * Approved: an access token for the person, once; a refresh token when the application has the
 * refresh_token grant, and an id_token when openid was granted (OpenID Connect, as the code flow).
 */
import { digest } from '../domain/secrets.ts'
import { AuthorizationPending, DeviceAccessDenied, ExpiredToken, InvalidGrant, SlowDown } from '../errors.ts'
import { recordPoll } from '../repositories/device-grants.ts'
import { idTokenFor } from './authorization-code.ts'
import { bindingOf, redeemDevice } from './issue.ts'
import { type GrantHandler, INVALID_GRANT_MESSAGE, requireParam } from './types.ts'

export const deviceCodeGrant: GrantHandler = {
  parameters: ['device_code'],
  clientRequired: true,

  async handle(services, { params, client, dpopJkt }) {
    const deviceCode = digest(requireParam(params, 'device_code'))
    const applicationId = client?.id as number
    // the poll is recorded even when it fails, so the transaction returns the error to throw
    const outcome = await services.db.transaction().execute(async (trx) => {
      const poll = await recordPoll(trx, deviceCode, applicationId)
      switch (poll.state) {
        case 'unknown':
        case 'consumed':
          return new InvalidGrant(INVALID_GRANT_MESSAGE)
        case 'expired':
          return new ExpiredToken()
        case 'too_fast':
          return new SlowDown(poll.interval)
        case 'pending':
          return new AuthorizationPending()
        case 'denied':
          return new DeviceAccessDenied()
        case 'approved':
          return (
            (await redeemDevice(
              trx,
              deviceCode,
              client?.grant_types.includes('refresh_token') ?? false,
              bindingOf(dpopJkt, client),
            )) ?? new InvalidGrant(INVALID_GRANT_MESSAGE)
          )
      }
    })
    if (outcome instanceof Error) throw outcome
    const { response, userId, scopes } = outcome
    if (!scopes.includes('openid') || !client) return response
    return {
      ...response,
      id_token: await idTokenFor(services, client, { userId, scopes, nonce: null, authTime: null }),
    }
  },
}
