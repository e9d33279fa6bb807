/**
 * When an authorization request may be answered without asking the user. GitLab's rule: a
 * trusted application skips the consent page, and only an instance-wide application (registered
 * by an administrator, no owner) can be trusted: a user owning a trusted application could
 * otherwise point it anywhere and collect tokens without a question.
 */
import type { Application } from '../db/schema.ts'

type Client = Pick<Application, 'trusted' | 'owner_id'>

/** Registered by an administrator, not by a user on their profile. */
export const isInstanceWide = (client: Pick<Application, 'owner_id'>): boolean => client.owner_id === null

export const isTrusted = (client: Client): boolean => client.trusted && isInstanceWide(client)
