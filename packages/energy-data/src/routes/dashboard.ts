import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { Kysely } from 'kysely'
import Negotiator from 'negotiator'
import Type from 'typebox'
import { NowSnapshot, nowSnapshot } from '../alerts/now.ts'
import { CHART_GROUPS, CHART_NAMES, type ChartName } from '../charts/charts.ts'
import { LANGUAGES, type Language } from '../charts/i18n.ts'
import { sendCached } from '../dashboard/http-cache.ts'
import { type DataStatus, dashboardPage } from '../dashboard/page.ts'
import type { EnergyDatabase } from '../db/schema.ts'
import { DAY_MS, QUARTER_MS } from '../domain/time.ts'
import { routePlugin } from '../energy-app.ts'
import { DetailError } from '../errors.ts'
import { eventStreams } from '../event-stream.ts'
import { PUBLIC_ROUTE } from '../plugins/auth.ts'
import { campusCost } from '../repositories/campus-cost.ts'
import { latestQuarter } from '../repositories/views.ts'
import { cached, NotFoundBody, NotModified, ValidationErrorBody } from '../schemas/views.ts'

/**
 * Scripts, styles, data and images from this origin only; nothing inline, no frames, no forms
 * elsewhere. With sign-in, requests may also go to the OAuth server (its token and revocation
 * endpoints, which answer CORS); the sign-in itself is a navigation there.
 */
function securityHeaders(oauthOrigin: string | undefined) {
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    oauthOrigin ? `connect-src 'self' ${oauthOrigin}` : "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ')
  return {
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    // the sign-in callback carries the code in the address: it reaches no other site
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
  }
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

/** The page's language parameter: no default, `Accept-Language` decides without it. */
const PageLang = Type.Enum([...LANGUAGES], {
  title: 'Language',
  type: 'string',
  description:
    'Language of the page and its charts: `it` or `en`. Without it, the one `Accept-Language` prefers; Italian when ' +
    'it names neither.',
})

/** `lang` when given, else the language `Accept-Language` prefers among ours, else Italian. */
function pageLanguage(lang: Language | undefined, acceptLanguage: string | undefined): Language {
  if (lang) return lang
  const preferred = new Negotiator({ headers: { 'accept-language': acceptLanguage ?? '' } }).language([...LANGUAGES])
  return (LANGUAGES as readonly string[]).includes(preferred ?? '') ? (preferred as Language) : 'it'
}

/** How far each chart's table reaches, and whether that is more than a day ago. */
async function dataStatus(db: Kysely<EnergyDatabase>, zone: string, now: number): Promise<DataStatus> {
  const groups = [...new Set(Object.values(CHART_GROUPS))]
  const latest = new Map(await Promise.all(groups.map(async (g) => [g, await latestQuarter(db, g)] as const)))
  const until = {} as Record<ChartName, number | undefined>
  const stale = {} as Record<ChartName, boolean>
  for (const name of CHART_NAMES) {
    const newest = latest.get(CHART_GROUPS[name])
    until[name] = newest === undefined ? undefined : newest + QUARTER_MS
    stale[name] = until[name] === undefined || now - (until[name] as number) > DAY_MS
  }
  return { until, stale, zone }
}

/** The dashboard page and its assets. */
export const dashboardRoutes = routePlugin('energy-dashboard-routes', (app) => {
  const { db, settings, now } = app
  const assets = loadAssets()
  const oauth = settings.oauth
  const signIn = oauth?.browserClientId ? { issuer: oauth.issuer, clientId: oauth.browserClientId } : undefined
  const SECURITY_HEADERS = securityHeaders(signIn ? new URL(signIn.issuer).origin : undefined)

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
          'origin only, no inline code). The language follows `Accept-Language` (Italian or English, Italian ' +
          'otherwise); `lang` overrides it, and the page links to the other language. Under each chart: how far ' +
          'its data reaches; when that is more than a day ago, a warning on top. With an OAuth server and a browser ' +
          'client (ENERGY_OAUTH_BROWSER_CLIENT_ID), the page offers sign-in: authorization code with PKCE (S256) in ' +
          'the browser, this page as the redirect URI (`code`, `state` and `iss` are checked, then removed from the ' +
          'address), the token kept in sessionStorage; signed in, the charts load with `Authorization: Bearer`. ' +
          "Extra query parameters (the callback's) are ignored by the server.",
        querystring: Type.Object({ lang: Type.Optional(PageLang) }),
        response: { 200: cached(PageBody), 304: NotModified, 404: NotFoundBody, 422: ValidationErrorBody },
      },
    },
    async (request, reply) => {
      reply.headers(SECURITY_HEADERS)
      const lang = pageLanguage(request.query.lang, request.headers['accept-language'])
      const at = now()
      const [status, cost] = await Promise.all([
        dataStatus(db, settings.zone, at),
        campusCost(app.pool, settings.zone, at),
      ])
      const page = dashboardPage(lang, CHART_NAMES, status, cost, signIn)
      return sendCached(request, reply, page, 'text/html; charset=utf-8', { vary: 'Accept-Language' })
    },
  )

  const streams = eventStreams(app)
  const now_ = () => nowSnapshot(app.pool, { now: now(), zone: settings.zone, open: app.alerts.open() })

  app.get(
    '/dashboard/now',
    {
      config: PUBLIC_ROUTE,
      schema: {
        tags: ['Chart'],
        summary: 'The dashboard\'s "Now" panel',
        description:
          "Each datalogger's last sample, its age and status (live: within 2 minutes, late: within 15, else " +
          "stale), the main meters' latest reading and today's amount so far (local day), the alerts firing. " +
          '`/dashboard/now/stream` sends the same after each evaluation (server-sent events).',
        response: { 200: NowSnapshot },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store')
      return now_()
    },
  )

  app.get(
    '/dashboard/now/stream',
    {
      config: PUBLIC_ROUTE,
      schema: {
        tags: ['Chart'],
        summary: 'The "Now" panel as it changes (server-sent events)',
        description:
          'A `now` event at once, then one after each evaluation of the alert rules (ALERT_EVALUATION_SECONDS, and ' +
          'each commit of the write path on a PostgreSQL server).',
        response: {
          200: {
            description: 'An event stream that stays open',
            content: { 'text/event-stream': { schema: Type.String() } },
          },
        },
      },
    },
    async (request, reply) => {
      let sending = false
      const send = () => {
        if (sending) return
        sending = true
        now_()
          .then((snapshot) => stream.write('now', snapshot))
          .catch((error: unknown) => request.log.warn({ err: error }, 'now panel'))
          .finally(() => {
            sending = false
          })
      }
      const unsubscribe = app.alerts.onTick(send)
      const stream = streams.open(request, reply, unsubscribe)
      send()
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
})
