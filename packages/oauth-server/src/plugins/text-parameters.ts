import fp from 'fastify-plugin'
import { oauthErrors } from '../errors.ts'

const hasNul = (value: unknown): boolean =>
  typeof value === 'string' ? value.includes('\u0000') : Array.isArray(value) && value.some(hasNul)

/**
 * PostgreSQL text cannot hold the NUL character: a parameter carrying one (a client_id, a
 * username, a nonce...) would fail its query with a 500. No parameter of this server may hold
 * it, so it is refused at the door as invalid_request, naming the parameter.
 */
export const textParametersPlugin = fp(
  async (app) => {
    // a plain callback: it runs on every request (see registerPlatform)
    app.addHook('preHandler', (request, _reply, done) => {
      for (const [part, values] of [
        ['query', request.query],
        ['body', request.body],
        ['path', request.params],
      ] as const) {
        if (!values || typeof values !== 'object') continue
        for (const [name, value] of Object.entries(values)) {
          if (hasNul(value)) {
            done(
              oauthErrors.validation([{ loc: [part, name], msg: 'must not contain the NUL character', type: 'nul' }]),
            )
            return
          }
        }
      }
      done()
    })
  },
  { name: 'oauth-text-parameters' },
)
