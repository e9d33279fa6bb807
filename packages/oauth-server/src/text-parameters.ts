import { parametersWhere } from '@campus/shared'
import fp from 'fastify-plugin'
import { oauthErrors } from '../errors.ts'

const hasNul = (value: unknown): boolean => typeof value === 'string' && value.includes('\u0000')

/** Where the first parameter of `values` holding NUL is. */
function withNul(part: string, values: unknown): [string, string] | undefined {
  const name = parametersWhere(values, hasNul)[0]
  return name === undefined ? undefined : [part, name]
}

/**
 * PostgreSQL text cannot hold the NUL character: a parameter carrying one (a client_id, a
 * username, a nonce...) would fail its query with a 500. No parameter of this server may hold
 * it, so it is refused at the door as invalid_request, naming the parameter.
 */
export const textParametersPlugin = fp(
  async (app) => {
    // a plain callback: it runs on every request (see registerPlatform)
    app.addHook('preHandler', (request, _reply, done) => {
      const found = withNul('query', request.query) ?? withNul('body', request.body) ?? withNul('path', request.params)
      if (!found) return done()
      done(oauthErrors.validation([{ loc: found, msg: 'must not contain the NUL character', type: 'nul' }]))
    })
  },
  { name: 'oauth-text-parameters' },
)
