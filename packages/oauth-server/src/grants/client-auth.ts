import type { Application } from '../db/schema.ts'
import { matchesDigest } from '../domain/secrets.ts'
import { InvalidClient, InvalidRequest } from '../errors.ts'
import type { OAuthServices } from '../oauth-app.ts'
import { findApplicationByUid } from '../repositories/applications.ts'

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none'

export interface ClientCredentials {
  clientId: string
  secret: string | undefined
  method: ClientAuthMethod
}

/** RFC 6749 2.3.1: id and secret are form-urlencoded before base64; malformed -> invalid_client. */
function parseBasic(header: string): { id: string; secret: string } {
  const encoded = header.slice(6).trim()
  const decoded = Buffer.from(encoded, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) throw new InvalidClient('Malformed HTTP Basic credentials.', true)
  try {
    const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '))
    return { id: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) }
  } catch {
    throw new InvalidClient('Malformed HTTP Basic credentials.', true)
  }
}

/**
 * Which client the request says it is, and how it proves it. One method per request
 * (RFC 6749 2.3): Basic and a body secret together are refused.
 */
export function readClientCredentials(
  authorization: string | undefined,
  body: { client_id?: string | undefined; client_secret?: string | undefined },
): ClientCredentials | undefined {
  if (authorization && /^basic /i.test(authorization)) {
    if (body.client_secret !== undefined) {
      throw new InvalidRequest('Only one client authentication method may be used.')
    }
    const { id, secret } = parseBasic(authorization)
    if (body.client_id !== undefined && body.client_id !== id) {
      throw new InvalidRequest('client_id does not match the HTTP Basic credentials.')
    }
    return { clientId: id, secret, method: 'client_secret_basic' }
  }
  if (body.client_id === undefined) {
    if (body.client_secret !== undefined) throw new InvalidRequest('Missing required parameter: client_id.')
    return undefined
  }
  if (body.client_secret !== undefined) {
    return { clientId: body.client_id, secret: body.client_secret, method: 'client_secret_post' }
  }
  return { clientId: body.client_id, secret: undefined, method: 'none' }
}

/**
 * The authenticated client: a confidential client proves its secret (compared as digests, in
 * constant time); a public client only names itself and must not send a secret.
 */
export async function authenticateClient(
  services: Pick<OAuthServices, 'db' | 'changes'>,
  credentials: ClientCredentials,
): Promise<Application> {
  const basic = credentials.method === 'client_secret_basic'
  const failed = () =>
    new InvalidClient(
      'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
      basic,
    )
  const { clients } = services.changes
  let application = clients.get(credentials.clientId)
  if (application && services.changes.syncing) {
    await services.changes.sync()
    application = clients.get(credentials.clientId)
  }
  if (!application) {
    application = await findApplicationByUid(services.db, credentials.clientId)
    if (!application) throw failed()
    clients.set(credentials.clientId, application)
  }
  if (application.confidential) {
    if (credentials.secret === undefined || !matchesDigest(credentials.secret, application.secret_digest))
      throw failed()
  } else if (credentials.secret !== undefined && credentials.secret !== '') {
    throw failed()
  }
  return application
}
