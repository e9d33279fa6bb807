/**
 * grant_type=client_credentials (RFC 6749 4.4): a confidential application's own access token,
 * with no user, for an application whose owner switched the grant on (Doorkeeper's validator:
 * no authenticated client -> invalid_client, the grant off -> unauthorized_client, a scope beyond
 * the application's -> invalid_scope). No scope asked: the application's scopes. No refresh
 * token (4.4.3).
 */
import { parseScope, within } from '../domain/scopes.ts'
import { InvalidClient, InvalidScope, UnauthorizedClient } from '../errors.ts'
import { findUserById } from '../repositories/users.ts'
import { bindingOf, issueTokens, newGrantId } from './issue.ts'
import type { GrantHandler } from './types.ts'

export const clientCredentialsGrant: GrantHandler = {
  parameters: ['scope'],
  clientRequired: true,

  async handle(services, { params, client, dpopJkt }) {
    // 4.4: confidential clients only (a public one cannot have the grant switched on either)
    if (!client?.confidential) throw new InvalidClient('Client authentication failed: a client secret is required.')
    // an application's own tokens act for the user who owns it: none while that user is blocked
    // (the tokens it holds stop too: repositories/tokens.ts, tokenUsable)
    if (client.owner_id !== null && (await findUserById(services.db, client.owner_id))?.locked) {
      throw new UnauthorizedClient("The application's owner is blocked.")
    }
    const asked = parseScope(params.scope)
    if (params.scope !== undefined && asked.length === 0) throw new InvalidScope('The requested scope is empty.')
    if (!within(asked, client.scopes)) {
      throw new InvalidScope('The requested scope is invalid, unknown, or malformed for this application.')
    }
    const scopes = asked.length ? asked : client.scopes
    if (scopes.length === 0) throw new InvalidScope('The application has no scope to grant.')
    return issueTokens(services.db, {
      applicationId: client.id,
      userId: null,
      scopes,
      grantId: newGrantId(),
      refresh: false,
      binding: bindingOf(dpopJkt, client),
    })
  },
}
