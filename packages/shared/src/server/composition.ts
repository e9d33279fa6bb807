/**
 * How a service is composed (see the README): capability plugins decorate the instance, route
 * plugins depend on them by name and receive the instance typed with their decorations.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyPluginAsync,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify'
import fp from 'fastify-plugin'

/**
 * A service's instance: Fastify with the TypeBox type provider, plus `Services`, what its
 * capability plugins decorate it with. A service names its own (`OAuthApp`, `EnergyApp`) rather
 * than augmenting Fastify's interfaces, which both services would share in one program.
 */
export type ServiceApp<Services> = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
> &
  Services

/**
 * The route-plugin maker of a service: `routePlugin(name, routes)` is a named, encapsulated
 * plugin that Fastify registers only after every capability plugin in `capabilities` (it refuses
 * to start when one is missing), and whose `routes` get the instance typed as `App`.
 */
export function routePlugins<App>(capabilities: readonly string[]) {
  return (name: string, routes: (app: App) => void | Promise<void>): FastifyPluginAsync =>
    fp(async (app) => routes(app as App), { name, dependencies: [...capabilities], encapsulate: true })
}
