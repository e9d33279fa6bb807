import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import Type from 'typebox'
import { CHART_NAMES } from '../charts/charts.ts'
import { sendCached } from '../dashboard/http-cache.ts'
import { dashboardPage } from '../dashboard/page.ts'
import { DetailError } from '../errors.ts'
import { cached, Lang, NotFoundBody, NotModified, PUBLIC_ROUTE, ValidationErrorBody } from './chart-report-schemas.ts'

/** Scripts, styles, data and images from this origin only; nothing inline, no frames, no forms elsewhere. */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

const SECURITY_HEADERS = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
}

interface Asset {
  body: Buffer
  contentType: string
  maxAge: number
}

/** Chart.js's UMD build from the installed package (never a CDN) and the dashboard's own script and style. */
function loadAssets(): Record<string, Asset> {
  const chartDist = dirname(createRequire(import.meta.url).resolve('chart.js'))
  const own = new URL('../dashboard/assets/', import.meta.url)
  const js = 'text/javascript; charset=utf-8'
  return {
    'chart.umd.min.js': { body: readFileSync(join(chartDist, 'chart.umd.min.js')), contentType: js, maxAge: 86_400 },
    'dashboard.js': { body: readFileSync(new URL('dashboard.js', own)), contentType: js, maxAge: 3600 },
    'dashboard.css': {
      body: readFileSync(new URL('dashboard.css', own)),
      contentType: 'text/css; charset=utf-8',
      maxAge: 3600,
    },
  }
}

const PageBody = {
  description: 'The dashboard page (HTML).',
  content: { 'text/html': { schema: Type.String() } },
}

export async function dashboardRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>()
  const assets = loadAssets()
  const pages = { it: dashboardPage('it', CHART_NAMES), en: dashboardPage('en', CHART_NAMES) }

  app.get(
    '/dashboard',
    {
      config: PUBLIC_ROUTE,
      schema: {
        tags: ['Chart'],
        summary: 'Dashboard of the four charts',
        description:
          'An HTML page drawing `/chart/fotovoltaico`, `/chart/bilancio`, `/chart/acqua` and `/chart/fontanelle` ' +
          'with Chart.js served by this service (no third-party assets; CSP: scripts, styles and requests to this ' +
          'origin only, no inline code). `lang` chooses the language of the page and of the charts; the page ' +
          'links to the other language.',
        querystring: Type.Object({ lang: Type.Optional(Lang) }),
        response: { 200: cached(PageBody), 304: NotModified, 404: NotFoundBody, 422: ValidationErrorBody },
      },
    },
    async (request, reply) => {
      reply.headers(SECURITY_HEADERS)
      return sendCached(request, reply, pages[request.query.lang ?? 'it'], 'text/html; charset=utf-8')
    },
  )

  app.get(
    '/dashboard/assets/:name',
    {
      config: PUBLIC_ROUTE,
      schema: {
        tags: ['Chart'],
        summary: 'Script and style files of the dashboard',
        description: `One of ${Object.keys(assets)
          .map((n) => `\`${n}\``)
          .join(', ')} (Chart.js 4 comes from the installed npm package).`,
        params: Type.Object({ name: Type.String({ examples: ['chart.umd.min.js'] }) }),
        response: {
          200: cached({
            description: 'The file.',
            content: { 'text/javascript': { schema: Type.String() }, 'text/css': { schema: Type.String() } },
          }),
          304: NotModified,
          404: NotFoundBody,
        },
      },
    },
    async (request, reply) => {
      const asset = Object.hasOwn(assets, request.params.name) ? assets[request.params.name] : undefined
      if (!asset) throw new DetailError(404, 'Not Found')
      reply.headers(SECURITY_HEADERS)
      return sendCached(request, reply, asset.body, asset.contentType, { maxAge: asset.maxAge })
    },
  )
}
