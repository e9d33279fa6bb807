/**
 * The device authorization grant (RFC 8628), where GitLab (Doorkeeper's device authorization
 * grant) has it: POST /oauth/authorize_device gives a device its codes; /oauth/device is the
 * verification page where a signed-in person enters the user code, then approves or denies.
 * The device then polls the token endpoint (grants/device-code.ts).
 */

import Type from 'typebox'
import { byUser } from '../audit.ts'
import { checkUserCode } from '../credentials.ts'
import { DEVICE_CODE_GRANT } from '../domain/grant-types.ts'
import { DEVICE_CODE_TTL, DEVICE_POLL_INTERVAL } from '../domain/lifetimes.ts'
import { resolveScopes } from '../domain/scopes.ts'
import { digest, generateSecret } from '../domain/secrets.ts'
import { generateUserCode, normalizeUserCode } from '../domain/user-codes.ts'
import { InvalidClient, InvalidScope, TemporarilyUnavailable, UnauthorizedClient } from '../errors.ts'
import { authenticateClient, readClientCredentials } from '../grants/client-auth.ts'
import { routePlugin } from '../oauth-app.ts'
import { noStore, requireFormBody } from '../oauth-endpoints.ts'
import { currentAccount } from '../pages/account.ts'
import { field, refuseForm, tooManyAttempts } from '../pages/forms.ts'
import { sendPage } from '../pages/layout.ts'
import { formSession, setFlash, takeFlash } from '../pages/session.ts'
import { deviceCodePage, deviceConsentPage } from '../pages/views/device.ts'
import { lockUserConsents, recordConsent } from '../repositories/consents.ts'
import { decideDeviceGrant, findUndecidedDeviceGrant, insertDeviceGrant } from '../repositories/device-grants.ts'
import { OAuthErrorResponses } from '../schemas/oauth.ts'
import { HtmlPage, Redirect } from '../schemas/pages.ts'

export const DEVICE_VERIFICATION_PATH = '/oauth/device'

const DeviceAuthorizationBody = Type.Object(
  {
    client_id: Type.Optional(Type.String({ description: 'Application ID (or HTTP Basic)' })),
    client_secret: Type.Optional(Type.String({ description: 'Client secret of a confidential application' })),
    scope: Type.Optional(Type.String({ description: "Space-delimited; default: GitLab's default scope" })),
  },
  { additionalProperties: true },
)

const DeviceAuthorizationResponse = Type.Object(
  {
    device_code: Type.String(),
    user_code: Type.String(),
    verification_uri: Type.String(),
    verification_uri_complete: Type.String(),
    expires_in: Type.Integer(),
    interval: Type.Integer(),
  },
  { description: 'RFC 8628 3.2 device authorization response' },
)

const DeviceQuery = Type.Object({ user_code: Type.Optional(Type.String({ maxLength: 64 })) })

const NOT_FOUND = 'This code is not valid: it may be mistyped, expired, or used already. Check your device.'

export const deviceRoutes = routePlugin('oauth-device-routes', (app) => {
  const { db, settings } = app

  app.post(
    '/oauth/authorize_device',
    {
      schema: {
        tags: ['OAuth'],
        summary: 'Device authorization endpoint (RFC 8628 3.1)',
        description:
          'Form-encoded client_id (a public client names itself; a confidential one authenticates) and scope, for an application with the device authorization grant switched on. Answers a device_code to poll the token endpoint with, and a user_code the person enters at verification_uri.',
        consumes: ['application/x-www-form-urlencoded'],
        body: DeviceAuthorizationBody,
        response: { 200: DeviceAuthorizationResponse, ...OAuthErrorResponses },
      },
    },
    async (request, reply) => {
      noStore(reply)
      // each answer is a grant row: a caller nobody knows yet may make so many per window
      const wait = await app.throttle.anonymous(request.ip)
      if (wait !== undefined)
        throw new TemporarilyUnavailable('Too many device authorizations from this address.', wait)
      requireFormBody(request)
      const body = request.body as Record<string, string | undefined>
      const credentials = readClientCredentials(request.headers.authorization, body)
      if (!credentials) throw new InvalidClient('Client authentication failed: client_id is required.')
      const client = await authenticateClient(app, credentials)
      if (!client.grant_types.includes(DEVICE_CODE_GRANT)) {
        throw new UnauthorizedClient('The client is not authorized to use the device authorization grant.')
      }
      const scopes = resolveScopes(body.scope, client.scopes)
      if (!scopes.ok) throw new InvalidScope(scopes.reason)
      const verificationUri = `${settings.issuer}${DEVICE_VERIFICATION_PATH}`
      const deviceCode = generateSecret('deviceCode')
      let userCode = generateUserCode()
      // a user code held by a live grant is drawn again (rare: 20^8 codes)
      while (
        !(await insertDeviceGrant(db, {
          deviceCodeDigest: digest(deviceCode),
          userCodeDigest: digest(normalizeUserCode(userCode)),
          applicationId: client.id,
          scopes: scopes.scopes,
          ttlSeconds: DEVICE_CODE_TTL,
          interval: DEVICE_POLL_INTERVAL,
        }))
      ) {
        userCode = generateUserCode()
      }
      return {
        device_code: deviceCode,
        user_code: userCode,
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${userCode}`,
        expires_in: DEVICE_CODE_TTL,
        interval: DEVICE_POLL_INTERVAL,
      }
    },
  )

  app.get(
    DEVICE_VERIFICATION_PATH,
    {
      schema: {
        tags: ['Pages'],
        summary: 'Device verification page (RFC 8628 3.3)',
        description:
          'Where a signed-in person enters the code a device shows (prefilled from ?user_code=, verification_uri_complete); signed out: to the sign-in page and back.',
        querystring: DeviceQuery,
        response: { 200: HtmlPage('The code form'), 302: Redirect('To the sign-in page') },
      },
    },
    async (request, reply) => {
      const account = await currentAccount(request, app)
      const typed = field(request.query, 'user_code') ?? ''
      if (!account) {
        const back = typed
          ? `${DEVICE_VERIFICATION_PATH}?user_code=${encodeURIComponent(typed)}`
          : DEVICE_VERIFICATION_PATH
        return reply.redirect(`/users/sign_in?return_to=${encodeURIComponent(back)}`, 302)
      }
      const { notice } = await takeFlash(app, account.session)
      return sendPage(reply, 200, 'Connect a device', deviceCodePage({ csrf: account.csrf, userCode: typed, notice }))
    },
  )

  app.post(
    DEVICE_VERIFICATION_PATH,
    {
      attachValidation: true,
      schema: {
        tags: ['Pages'],
        summary: 'Device verification: the code, then the decision',
        description:
          'Form: csrf_token and user_code shows the consent page for that device; with decision=approve|deny records the decision once (303 back to the page, which says what happened). Each unknown code counts as a failed sign-in (429 with Retry-After past the limit).',
        consumes: ['application/x-www-form-urlencoded'],
        body: Type.Object(
          { csrf_token: Type.String(), user_code: Type.String(), decision: Type.Optional(Type.String()) },
          { additionalProperties: true },
        ),
        response: {
          200: HtmlPage('The consent page for the device'),
          303: Redirect('Back to /oauth/device, saying what was decided'),
          302: Redirect('To the sign-in page'),
          403: HtmlPage('Missing or wrong CSRF token'),
          422: HtmlPage('The code is unknown, expired or used'),
          429: HtmlPage('Too many wrong codes (Retry-After)'),
        },
      },
    },
    async (request, reply) => {
      const session = await formSession(request, app)
      if (!session) return refuseForm(reply)
      const account = await currentAccount(request, app)
      if (!account) return reply.redirect(`/users/sign_in?return_to=${DEVICE_VERIFICATION_PATH}`, 302)
      const typed = field(request.body, 'user_code') ?? ''
      const userCode = digest(normalizeUserCode(typed))
      let grant: Awaited<ReturnType<typeof findUndecidedDeviceGrant>>
      const check = await checkUserCode(app, account.user, request.ip, async () => {
        grant = await findUndecidedDeviceGrant(db, userCode)
        return grant !== undefined
      })
      if (check.outcome === 'throttled') return tooManyAttempts(reply, 'codes', check.wait)
      if (check.outcome !== 'accepted' || !grant) {
        return sendPage(
          reply,
          422,
          'Connect a device',
          deviceCodePage({ csrf: account.csrf, userCode: typed, error: NOT_FOUND }),
        )
      }
      const decision = field(request.body, 'decision')
      if (decision === undefined) {
        return sendPage(
          reply,
          200,
          `Authorize ${grant.applicationName}`,
          deviceConsentPage({
            csrf: account.csrf,
            userCode: typed.toUpperCase(),
            applicationName: grant.applicationName,
            applicationOwner: grant.applicationOwner,
            registeredItself: grant.applicationRegisteredItself,
            scopes: grant.scopes,
            username: account.user.username,
          }),
        )
      }
      const approved = decision === 'approve'
      const userId = account.user.id
      const { applicationId, scopes, applicationName } = grant
      // an approval is a consent: listed under Authorized applications, revoked with it, and in
      // turn with any revocation of this user's authorizations
      const decided = await db.transaction().execute(async (trx) => {
        await lockUserConsents(trx, userId)
        const recorded = await decideDeviceGrant(trx, userCode, userId, approved ? 'approved' : 'denied')
        if (recorded && approved) {
          await recordConsent(trx, userId, applicationId, scopes)
          await app.audit.record(
            {
              event: 'oauth_consent_granted',
              ...byUser(account.user, request.ip),
              target: { type: 'Doorkeeper::Application', id: applicationId, details: applicationName },
              message: `Authorized ${applicationName} on a device for ${scopes.join(' ')}`,
            },
            trx,
          )
        }
        return recorded
      })
      const notice = !decided
        ? NOT_FOUND
        : approved
          ? `${grant.applicationName} is authorized: go back to your device.`
          : `${grant.applicationName} was denied access.`
      await setFlash(app, account.session, { notice })
      return reply.redirect(DEVICE_VERIFICATION_PATH, 303)
    },
  )
})
