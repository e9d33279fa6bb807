/**
 * When an authorization request may be answered without asking the user. GitLab's rule: a
 * trusted application skips the consent page, and only an instance-wide application (registered
 * by an administrator, no owner) can be trusted: a user owning a trusted application could
 * otherwise point it anywhere and collect tokens without a question. An earlier approval counts
 * again only for a confidential client, whose identity the token endpoint proves (GitLab: a
 * matching token and a confidential application; RFC 8252 8.6).
 */
import { within } from './scopes.ts'

/** What the rule reads of an application. */
interface Client {
  trusted: boolean
  owner_id: number | null
  /** set for a client that registered itself (RFC 7591) */
  registration_token_digest: Buffer | null
}

/** Registered by an administrator: not by a user on their profile, nor by the client itself (RFC 7591). */
export const isInstanceWide = (client: Pick<Client, 'owner_id' | 'registration_token_digest'>): boolean =>
  client.owner_id === null && client.registration_token_digest === null

export const isTrusted = (client: Client): boolean => client.trusted && isInstanceWide(client)

/** Whether the request can be answered at once, given the scopes the user approved earlier. */
export function consentAlreadyGiven(
  client: Client & { confidential: boolean },
  requested: readonly string[],
  consented: readonly string[],
): boolean {
  if (isTrusted(client)) return true
  // a public client's id is no proof: any program may use it, on any loopback port
  return client.confidential && within(requested, consented)
}
