/**
 * Dynamic client registration (RFC 7591) at POST /oauth/register, and the management of a
 * registration by its client (RFC 7592) at /oauth/register/:client_id with the registration
 * access token it was given. OAUTH_REGISTRATION says who may register: nobody (404), holders of
 * an administrator's initial access token, or anyone (a public client, rate limited per address,
 * no powerful scope). The redirect URIs pass the applications page's rules.
 */

import type { FastifyRequest } from 'fastify'
import Type from 'typebox'
import { AccountError, createApplication } from '../accounts.ts'
import { applicationTarget } from '../audit.ts'
import type { Application } from '../db/schema.ts'
import { type AuthMethod, checkClientMetadata, type RegistrationAuthority } from '../domain/client-metadata.ts'
import { POWERFUL_SCOPES } from '../domain/scopes.ts'
import { digest, generateSecret } from '../domain/secrets.ts'
import { ApiError, InvalidToken, OAuthError, TemporarilyUnavailable } from '../errors.ts'
import { routePlugin } from '../oauth-app.ts'
import { noStore } from '../oauth-endpoints.ts'
import { deleteOwnedApplication, instanceApplicationNamed } from '../repositories/applications.ts'
import { findRegisteredClient, spendInitialAccessToken, updateRegisteredClient } from '../repositories/registrations.ts'
import { MessageBody, OAuthErrorBody } from '../schemas/oauth.ts'

const REGISTER_PATH = '/oauth/register'

const ClientMetadataBody = Type.Object(
  {
    redirect_uris: Type.Optional(Type.Array(Type.String(), { description: 'Required for authorization_code' })),
    token_endpoint_auth_method: Type.Optional(
      Type.String({ description: 'none (public, PKCE), client_secret_basic or client_secret_post' }),
    ),
    grant_types: Type.Optional(
      Type.Array(Type.String(), {
        description: 'authorization_code (default), refresh_token, client_credentials, the device grant',
      }),
    ),
    response_types: Type.Optional(Type.Array(Type.String(), { description: 'code' })),
    client_name: Type.Optional(Type.String()),
    scope: Type.Optional(
      Type.String({ description: 'Space-delimited; default: every scope the registration may hold' }),
    ),
    client_id: Type.Optional(Type.String({ description: 'RFC 7592 2.2: the client being updated' })),
  },
  { additionalProperties: true, description: 'RFC 7591 2 client metadata (other members are ignored)' },
)

const RegisteredClient = Type.Object(
  {
    client_id: Type.String(),
    client_secret: Type.Optional(Type.String({ description: 'A confidential client, at registration only' })),
    client_id_issued_at: Type.Integer(),
    client_secret_expires_at: Type.Optional(Type.Integer({ description: '0: never' })),
    registration_access_token: Type.Optional(
      Type.String({ description: 'RFC 7592: the Bearer token of /oauth/register/:client_id, at registration only' }),
    ),
    registration_client_uri: Type.String(),
    client_name: Type.String(),
    redirect_uris: Type.Array(Type.String()),
    grant_types: Type.Array(Type.String()),
    response_types: Type.Array(Type.String()),
    token_endpoint_auth_method: Type.String(),
    scope: Type.String(),
  },
  { description: 'RFC 7591 3.2.1' },
)

/** RFC 7591 3.2.2: invalid_redirect_uri or invalid_client_metadata. */
class InvalidClientMetadata extends OAuthError {
  constructor(error: 'invalid_redirect_uri' | 'invalid_client_metadata', description: string) {
    super(400, error, description)
  }
}

const NOT_FOUND = () => new ApiError(404, '404 Not Found')

const bearerOf = (request: FastifyRequest): string | undefined => {
  const authorization = request.headers.authorization
  return authorization && /^bearer /i.test(authorization) ? authorization.slice(7).trim() || undefined : undefined
}

function metadataOf(client: Application, issuer: string) {
  const authMethod: AuthMethod = client.confidential ? 'client_secret_basic' : 'none'
  return {
    client_id: client.uid,
    client_id_issued_at: Math.floor(client.created_at.getTime() / 1000),
    ...(client.confidential ? { client_secret_expires_at: 0 } : {}),
    registration_client_uri: `${issuer}${REGISTER_PATH}/${client.uid}`,
    client_name: client.name,
    redirect_uris: client.redirect_uris,
    grant_types: client.grant_types,
    response_types: client.grant_types.includes('authorization_code') ? ['code'] : [],
    token_endpoint_auth_method: authMethod,
    scope: client.scopes.join(' '),
  }
}

export const registrationRoutes = routePlugin('oauth-registration-routes', (app) => {
  const { db } = app
  const mode = () => app.settings.registration ?? 'off'

  /** The metadata as this server registers it, or RFC 7591's 400. */
  async function checked(body: unknown, authority: RegistrationAuthority, self?: Application) {
    const check = checkClientMetadata((body ?? {}) as Record<string, unknown>, authority)
    if (!check.ok) throw new InvalidClientMetadata(check.error, check.description)
    if (self && check.client.confidential !== self.confidential) {
      throw new InvalidClientMetadata('invalid_client_metadata', 'token_endpoint_auth_method cannot change')
    }
    // a client must not pass for one of the instance's own (the device consent page says which it is)
    if ((!self || self.name !== check.client.name) && (await instanceApplicationNamed(db, check.client.name))) {
      throw new InvalidClientMetadata(
        'invalid_client_metadata',
        'client_name is taken by an application of this instance',
      )
    }
    return check.client
  }

  /** The client a registration access token manages (RFC 7592 3: 401 invalid_token otherwise). */
  async function registered(request: FastifyRequest): Promise<Application> {
    if (mode() === 'off') throw NOT_FOUND()
    const token = bearerOf(request)
    const client =
      token && (await findRegisteredClient(db, (request.params as { client_id: string }).client_id, digest(token)))
    if (!client) throw new InvalidToken('The registration access token is invalid for this client.')
    return client
  }

  const errors = { 400: OAuthErrorBody, 401: OAuthErrorBody, 404: MessageBody, 429: OAuthErrorBody }

  app.post(
    REGISTER_PATH,
    {
      attachValidation: true,
      schema: {
        tags: ['OAuth'],
        summary: 'Dynamic client registration (RFC 7591)',
        consumes: ['application/json'],
        description:
          'JSON client metadata. With OAUTH_REGISTRATION=token, `Authorization: Bearer` with an initial access token an administrator issued (`pnpm oauth registration-token:create`); with open, anyone may register a public client (token_endpoint_auth_method none, PKCE), at most OAUTH_THROTTLE_REGISTRATION_LIMIT per address and window, without api or write_energy (an initial access token still allows them and a confidential client). Redirect URIs follow the applications page: https, or http on loopback. Answers 201 with the client_id (and a secret for a confidential client) and a registration access token for /oauth/register/:client_id (RFC 7592). Off (the default): 404.',
        security: [{ bearer: [] }, {}],
        body: ClientMetadataBody,
        response: { 201: RegisteredClient, ...errors },
      },
    },
    async (request, reply) => {
      noStore(reply)
      if (mode() === 'off') throw NOT_FOUND()
      if (request.validationError) {
        throw new InvalidClientMetadata('invalid_client_metadata', request.validationError.message)
      }
      const initial = bearerOf(request)
      if (initial === undefined && mode() === 'token') {
        throw new InvalidToken('An initial access token is required to register a client.')
      }
      const authority: RegistrationAuthority = initial === undefined ? 'open' : 'token'
      const client = await checked(request.body, authority)
      if (authority === 'open') {
        const wait = await app.throttle.registration(request.ip)
        if (wait !== undefined) {
          throw new TemporarilyUnavailable(`Too many registrations from this address: retry in ${wait} s.`, wait)
        }
      }
      const registrationToken = generateSecret('registrationToken')
      // the initial access token's use and the client are one transaction: none without the other
      const created = await db.transaction().execute(async (trx) => {
        if (initial !== undefined && !(await spendInitialAccessToken(trx, digest(initial)))) {
          throw new InvalidToken('The initial access token is invalid, expired or used up.')
        }
        try {
          return await createApplication(trx, {
            name: client.name,
            redirectUris: client.redirectUris,
            scopes: client.scopes,
            grantTypes: client.grantTypes,
            confidential: client.confidential,
            registrationTokenDigest: digest(registrationToken),
          })
        } catch (error) {
          if (error instanceof AccountError) throw new InvalidClientMetadata('invalid_client_metadata', error.message)
          throw error
        }
      })
      await app.audit.record({
        event: 'oauth_application_registered',
        author: 'anonymous',
        target: applicationTarget(created.application),
        message: `${created.application.name} registered itself (${authority === 'open' ? 'open registration' : 'with an initial access token'}, ${client.scopes.join(' ')})`,
        ip: request.ip,
      })
      const metadata = metadataOf(created.application, app.settings.issuer)
      return reply.code(201).send({
        ...metadata,
        token_endpoint_auth_method: client.authMethod,
        ...(created.secret ? { client_secret: created.secret } : {}),
        registration_access_token: registrationToken,
      })
    },
  )

  const managed = { params: Type.Object({ client_id: Type.String() }), security: [{ bearer: [] }] }

  app.get(
    `${REGISTER_PATH}/:client_id`,
    {
      schema: {
        tags: ['OAuth'],
        summary: 'A registered client reads its registration (RFC 7592 2.1)',
        description: '`Authorization: Bearer` with the registration access token; 401 invalid_token otherwise.',
        ...managed,
        response: { 200: RegisteredClient, ...errors },
      },
    },
    async (request, reply) => {
      noStore(reply)
      return metadataOf(await registered(request), app.settings.issuer)
    },
  )

  app.put(
    `${REGISTER_PATH}/:client_id`,
    {
      attachValidation: true,
      schema: {
        tags: ['OAuth'],
        summary: 'A registered client replaces its metadata (RFC 7592 2.2)',
        consumes: ['application/json'],
        description:
          'The whole metadata again, with client_id; the same rules as at registration (an open registration stays within them; its client type cannot change).',
        ...managed,
        body: ClientMetadataBody,
        response: { 200: RegisteredClient, ...errors },
      },
    },
    async (request, reply) => {
      noStore(reply)
      const self = await registered(request)
      if (request.validationError) {
        throw new InvalidClientMetadata('invalid_client_metadata', request.validationError.message)
      }
      const body = (request.body ?? {}) as { client_id?: string }
      if (body.client_id !== undefined && body.client_id !== self.uid) {
        throw new InvalidClientMetadata('invalid_client_metadata', 'client_id does not name this client')
      }
      // an update stays within what the registration was allowed: more only for a client an initial access token made
      const authority: RegistrationAuthority =
        self.confidential || self.scopes.some((s) => (POWERFUL_SCOPES as readonly string[]).includes(s))
          ? 'token'
          : 'open'
      const client = await checked(body, authority, self)
      const updated = await app.changes.commit((trx) => updateRegisteredClient(trx, self.id, client))
      return metadataOf(updated, app.settings.issuer)
    },
  )

  app.delete(
    `${REGISTER_PATH}/:client_id`,
    {
      schema: {
        tags: ['OAuth'],
        summary: 'A registered client deletes its registration (RFC 7592 2.3)',
        description: 'Its tokens end with it.',
        ...managed,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errors },
      },
    },
    async (request, reply) => {
      noStore(reply)
      const self = await registered(request)
      await app.changes.commit((trx) => deleteOwnedApplication(trx, self.id, null))
      await app.audit.record({
        event: 'oauth_application_deleted',
        author: { client: { uid: self.uid, name: self.name } },
        target: applicationTarget(self),
        message: `${self.name} deleted its registration (RFC 7592)`,
        ip: request.ip,
      })
      return reply.code(204).send(null)
    },
  )
})
