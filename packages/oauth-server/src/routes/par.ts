/**
 * POST /oauth/par: pushed authorization requests (RFC 9126). The client authenticates as at the
 * token endpoint and posts the parameters it would send to /oauth/authorize; they are checked as
 * the authorization endpoint checks them, kept, and named by a request_uri the browser then
 * carries instead. A `DPoP` header binds the code to come to its key (RFC 9449 10.1).
 */
import Type from 'typebox'
import { AUTHORIZATION_PARAMETERS, fromForm, validateAuthorizationRequest } from '../authorization/request.ts'
import { PUSHED_REQUEST_TTL } from '../domain/lifetimes.ts'
import { digest, generateSecret } from '../domain/secrets.ts'
import { InvalidClient, InvalidRequest } from '../errors.ts'
import { authenticateClient, readClientCredentials } from '../grants/client-auth.ts'
import { routePlugin } from '../oauth-app.ts'
import { noStore, requireFormBody, SMALL_ANSWERS, senderKey } from '../oauth-endpoints.ts'
import { insertPushedRequest } from '../repositories/pushed-requests.ts'
import { OAuthErrorResponses } from '../schemas/oauth.ts'

const param = (description: string) => Type.Optional(Type.String({ description }))

const PushedRequestBody = Type.Object(
  {
    client_id: param('Application ID (or HTTP Basic)'),
    client_secret: param('Client secret of a confidential application (or HTTP Basic)'),
    response_type: param('code, or token (implicit, when enabled)'),
    redirect_uri: param('A registered redirect URI, exactly'),
    scope: param('Space-delimited; default: every scope of the application'),
    state: param('Returned unchanged'),
    code_challenge: param('PKCE (RFC 7636); required for public clients'),
    code_challenge_method: param('S256'),
    nonce: param('OpenID Connect: returned in the id_token'),
    dpop_jkt: param('RFC 9449 10: the DPoP key the code is for (a DPoP header says it too, and must agree)'),
  },
  { additionalProperties: true },
)

const PushedRequestAnswer = Type.Object(
  {
    request_uri: Type.String({ description: 'Send the browser to /oauth/authorize?client_id=...&request_uri=...' }),
    expires_in: Type.Integer({ description: 'Seconds within which /oauth/authorize must be opened with it' }),
  },
  { description: 'RFC 9126 2.2' },
)

export const parRoutes = routePlugin('oauth-par-routes', (app) => {
  app.post(
    '/oauth/par',
    {
      ...SMALL_ANSWERS,
      schema: {
        tags: ['OAuth'],
        summary: 'Pushed authorization request (RFC 9126)',
        description:
          'Form-encoded: client authentication as at the token endpoint (a public client sends its client_id), and the parameters of /oauth/authorize, checked as there; errors as JSON (RFC 6749 5.2). Answers 201 with a request_uri that /oauth/authorize takes with the client_id, within expires_in (60 s); it is used up by the decision. A `DPoP` header binds the code to its key (RFC 9449 10.1).',
        consumes: ['application/x-www-form-urlencoded'],
        body: PushedRequestBody,
        response: { 201: PushedRequestAnswer, ...OAuthErrorResponses },
      },
    },
    async (request, reply) => {
      noStore(reply)
      requireFormBody(request)
      const body = request.body as Record<string, unknown>
      const proofKey = await senderKey(request, reply, app, '/oauth/par')
      const credentials = readClientCredentials(request.headers.authorization, body as Record<string, string>)
      if (!credentials) throw new InvalidClient('Client authentication is required.')
      const client = await authenticateClient(app, credentials)
      if (body.request_uri !== undefined) {
        throw new InvalidRequest('request_uri is not allowed in a pushed authorization request.')
      }
      const form = fromForm(body)
      if (proofKey !== undefined && form.get('dpop_jkt') !== undefined && form.get('dpop_jkt') !== proofKey) {
        throw new InvalidRequest('dpop_jkt does not match the key of the DPoP proof.')
      }
      const params = {
        get: (name: string) => (name === 'client_id' ? client.uid : form.get(name)),
        repeated: form.repeated,
      }
      const validation = await validateAuthorizationRequest(app.db, app.settings, params, true)
      if (validation.kind === 'page') throw new InvalidRequest(validation.message)
      if (validation.kind === 'redirect') throw validation.error
      const parameters: Record<string, string> = {}
      for (const name of AUTHORIZATION_PARAMETERS) {
        const value = params.get(name)
        if (value !== undefined && name !== 'dpop_jkt') parameters[name] = value
      }
      const requestUri = generateSecret('requestUri')
      await insertPushedRequest(app.db, {
        digest: digest(requestUri),
        applicationId: client.id,
        parameters,
        dpopJkt: proofKey ?? validation.request.dpopJkt ?? null,
        ttlSeconds: PUSHED_REQUEST_TTL,
      })
      return reply.code(201).send({ request_uri: requestUri, expires_in: PUSHED_REQUEST_TTL })
    },
  )
})
