import type { ParameterRule } from '@campus/shared'

/**
 * PostgreSQL text cannot hold the NUL character: a parameter carrying one (a client_id, a
 * username, a nonce...) would fail its query with a 500. No parameter of this server may hold
 * it, so it is refused at the door as invalid_request, naming the parameter.
 */
export const NUL_FREE: ParameterRule = {
  parts: ['query', 'body', 'path'],
  test: (value) => typeof value === 'string' && value.includes('\u0000'),
  msg: 'must not contain the NUL character',
  type: 'nul',
}
