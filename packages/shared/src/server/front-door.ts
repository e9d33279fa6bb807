import type { FastifyInstance } from 'fastify'
import Type from 'typebox'

export interface FrontDoor {
  /** Where `GET /` sends a visitor: the service's page for people. */
  home: string
  /** The service's icon, an SVG document, served at `/favicon.ico` (and linked by its pages). */
  icon: string
}

export const FAVICON_PATH = '/favicon.ico'

/**
 * One rule for both services: `GET /` is a 302 to the page a person starts from, and the
 * browser's icon request is answered, rather than two different 404s.
 */
export function registerFrontDoor(app: FastifyInstance, door: FrontDoor): void {
  app.get(
    '/',
    // for people, not API clients: left out of the OpenAPI document, as the icon is
    { schema: { hide: true, response: { 302: Type.Null({ description: `To ${door.home}` }) } } },
    async (_request, reply) => reply.redirect(door.home, 302),
  )
  app.get(
    FAVICON_PATH,
    { schema: { hide: true, response: { 200: Type.String({ description: 'SVG icon' }) } } },
    async (_request, reply) =>
      reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(door.icon),
  )
}
