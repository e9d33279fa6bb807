/** GET and POST /oauth/authorize: validate, sign in if needed, consent, redirect back. */

import type { FastifyReply } from 'fastify'
import Type from 'typebox'
import { applicationTarget, byUser } from '../audit.ts'
import {
  type AuthorizationRequest,
  fromForm,
  fromSearchParams,
  type Validation,
  validateAuthorizationRequest,
} from '../authorization/request.ts'
import { approve, errorRedirect, targetOf } from '../authorization/response.ts'
import { consentAlreadyGiven, isInstanceWide } from '../domain/consent.ts'
import { AccessDenied } from '../errors.ts'
import { type OAuthServices, routePlugin } from '../oauth-app.ts'
import { refuseForm } from '../pages/forms.ts'
import { sendErrorPage, sendPage } from '../pages/layout.ts'
import { csrfToken, formSession, loadSession, type Session } from '../pages/session.ts'
import { authorizationErrorPage, consentPage } from '../pages/views/sign-in.ts'
import { findConsentScopes, lockUserConsents, recordConsent } from '../repositories/consents.ts'
import { findUserById } from '../repositories/users.ts'
import { HtmlPage, Redirect } from '../schemas/pages.ts'

const AuthorizeQuery = Type.Object(
  {
    client_id: Type.Optional(Type.String({ description: 'Application ID' })),
    redirect_uri: Type.Optional(Type.String({ description: 'A registered redirect URI, exactly' })),
    response_type: Type.Optional(Type.String({ description: 'code, or token (implicit, when enabled)' })),
    scope: Type.Optional(Type.String({ description: 'Space-delimited; default: every scope of the application' })),
    state: Type.Optional(Type.String({ description: 'Returned unchanged' })),
    code_challenge: Type.Optional(Type.String({ description: 'PKCE (RFC 7636); required for public clients' })),
    code_challenge_method: Type.Optional(Type.String({ description: 'S256' })),
    nonce: Type.Optional(Type.String({ description: 'OpenID Connect: returned in the id_token' })),
    dpop_jkt: Type.Optional(
      Type.String({
        description: 'RFC 9449 10: the code is redeemed only with a DPoP proof of this key (its JWK thumbprint)',
      }),
    ),
    request_uri: Type.Optional(
      Type.String({
        description:
          'RFC 9126: the request_uri /oauth/par answered, with client_id; the pushed parameters are used, and no others',
      }),
    ),
  },
  { additionalProperties: true },
)

const INVALID_CLIENT_TITLE = 'The authorization request is invalid'

/** The GET URL that restarts this authorization request (used to come back after sign-in). */
function authorizeUrl(request: AuthorizationRequest): string {
  if (request.pushed) {
    return `/oauth/authorize?${new URLSearchParams({ client_id: request.client.uid, request_uri: request.pushed.requestUri })}`
  }
  const params = new URLSearchParams({
    client_id: request.client.uid,
    redirect_uri: request.redirectUri,
    response_type: request.responseType,
    scope: request.scopes.join(' '),
  })
  if (request.state !== undefined) params.set('state', request.state)
  if (request.codeChallenge !== undefined) params.set('code_challenge', request.codeChallenge)
  if (request.codeChallengeMethod !== undefined) params.set('code_challenge_method', request.codeChallengeMethod)
  if (request.nonce !== undefined) params.set('nonce', request.nonce)
  if (request.dpopJkt !== undefined) params.set('dpop_jkt', request.dpopJkt)
  return `/oauth/authorize?${params.toString()}`
}

/**
 * An error once the client and redirect URI are known good (RFC 6749 4.1.2.1): back to the
 * client when an administrator registered it; on a page for an application a user registered,
 * which could otherwise use this server as an open redirector (RFC 9700 4.11.2).
 */
function answerError(
  reply: FastifyReply,
  validation: Extract<Validation, { kind: 'redirect' }>,
  issuer: string,
  status: 302 | 303,
) {
  const target = errorRedirect(validation.target, validation.error, issuer)
  if (isInstanceWide(validation.client)) return reply.redirect(target, status)
  return sendPage(
    reply,
    400,
    INVALID_CLIENT_TITLE,
    authorizationErrorPage({ client: validation.client, error: validation.error, back: target }),
  )
}

async function signedInUser(services: Pick<OAuthServices, 'db'>, session: Session | undefined) {
  if (!session?.row.user_id) return undefined
  const user = await findUserById(services.db, session.row.user_id)
  return user && !user.locked ? user : undefined
}

export const authorizeRoutes = routePlugin('oauth-authorize-routes', (app) => {
  const { db, settings } = app

  app.get(
    '/oauth/authorize',
    {
      attachValidation: true,
      schema: {
        tags: ['OAuth'],
        summary: 'Authorization endpoint (RFC 6749 3.1)',
        description:
          'Signs the user in (password, then TOTP when 2FA is on), asks for consent (skipped for trusted instance-wide applications, and for a confidential client the user approved earlier for these scopes), then redirects to redirect_uri with code, state and iss in the query, or for response_type=token with access_token, token_type, expires_in, scope, state and iss in the fragment. An unknown client or unregistered redirect URI shows an error page and never redirects; so do the errors of an application a user registered (RFC 9700 4.11.2), while those of an instance-wide application go back to it.',
        querystring: AuthorizeQuery,
        response: {
          200: HtmlPage('Consent page'),
          302: Redirect('To the client (response or error), or to the sign-in page'),
          400: HtmlPage(
            "Invalid client_id or redirect_uri, or an invalid request of a user's own application: no redirect",
          ),
        },
      },
    },
    async (request, reply) => {
      const query = new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1 || request.url.length))
      const validation = await validateAuthorizationRequest(db, settings, fromSearchParams(query))
      if (validation.kind === 'page') return sendErrorPage(reply, 400, INVALID_CLIENT_TITLE, validation.message)
      if (validation.kind === 'redirect') return answerError(reply, validation, settings.issuer, 302)
      const authorization = validation.request
      const session = await loadSession(request, app)
      const user = await signedInUser(app, session)
      if (!user) {
        return reply.redirect(`/users/sign_in?return_to=${encodeURIComponent(authorizeUrl(authorization))}`, 302)
      }
      // an earlier consent answers at once, read and used in turn with any revocation of it
      const authTime = session?.row.authenticated_at ?? null
      const target = await db.transaction().execute(async (trx) => {
        await lockUserConsents(trx, user.id)
        const consented = await findConsentScopes(trx, user.id, authorization.client.id)
        if (!consentAlreadyGiven(authorization.client, authorization.scopes, consented)) return undefined
        return approve(trx, authorization, user.id, settings.issuer, authTime)
      })
      if (target) return reply.redirect(target, 302)
      return sendPage(
        reply,
        200,
        `Authorize ${authorization.client.name}`,
        consentPage({ csrf: csrfToken(session as Session), request: authorization, username: user.username }),
      )
    },
  )

  app.post(
    '/oauth/authorize',
    {
      attachValidation: true,
      schema: {
        tags: ['OAuth'],
        summary: 'Consent decision',
        description:
          'Form posted by the consent page: the authorization parameters, csrf_token and decision=approve|deny. Answers 303 to the client.',
        consumes: ['application/x-www-form-urlencoded'],
        body: Type.Object(
          { ...AuthorizeQuery.properties, csrf_token: Type.String(), decision: Type.String() },
          { additionalProperties: true },
        ),
        response: {
          303: Redirect('To the client with the response or access_denied'),
          400: HtmlPage("Invalid client_id or redirect_uri, or an invalid request of a user's own application"),
          403: HtmlPage('Missing or wrong CSRF token'),
        },
      },
    },
    async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, unknown>
      const session = await formSession(request, app)
      if (!session)
        return refuseForm(reply, 'The form expired or did not come from this site. Start again from the application.')
      const validation = await validateAuthorizationRequest(db, settings, fromForm(body))
      if (validation.kind === 'page') return sendErrorPage(reply, 400, INVALID_CLIENT_TITLE, validation.message)
      if (validation.kind === 'redirect') return answerError(reply, validation, settings.issuer, 303)
      const authorization = validation.request
      const user = await signedInUser(app, session)
      if (!user) {
        return reply.redirect(`/users/sign_in?return_to=${encodeURIComponent(authorizeUrl(authorization))}`, 303)
      }
      if (body.decision !== 'approve') {
        return reply.redirect(errorRedirect(targetOf(authorization), new AccessDenied(), settings.issuer), 303)
      }
      const authTime = session?.row.authenticated_at ?? null
      // consent and what it grants (a code, or implicit tokens) commit together, in turn with
      // any revocation of this user's authorizations
      const target = await db.transaction().execute(async (trx) => {
        await lockUserConsents(trx, user.id)
        await recordConsent(trx, user.id, authorization.client.id, authorization.scopes)
        await app.audit.record(
          {
            event: 'oauth_consent_granted',
            ...byUser(user, request.ip),
            target: applicationTarget(authorization.client),
            message: `Authorized ${authorization.client.name} for ${authorization.scopes.join(' ')}`,
          },
          trx,
        )
        return approve(trx, authorization, user.id, settings.issuer, authTime)
      })
      return reply.redirect(target, 303)
    },
  )
})
