/**
 * Fuzzing from the server's own OpenAPI document: generated and hostile requests over raw HTTP
 * against a listening server (behind a trusted proxy at 127.0.0.1, so X-Forwarded-For counts)
 * on a database holding users, confidential, public and user-owned applications, live tokens,
 * a personal access token and a signed-in session. Redirect URIs are bent every way around the
 * registered ones, and every header the server reads gets values of its own. No 5xx, no
 * internals in a body, every 4xx in its documented shape, the database unchanged by every
 * rejected request.
 */
import {
  authorizationValues,
  contentTypeValues,
  cookieValues,
  type FuzzRequest,
  forwardedForValues,
  forwardedValues,
  fuzzPlan,
  fuzzService,
  hostileRedirectUris,
  hostileString,
  percentEncode,
  requestIdValues,
  secretHeaderValues,
} from '@campus/shared/testing'
import fc from 'fast-check'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApplication, createPersonalAccessToken } from '../../src/accounts.ts'
import { PREFIX } from '../../src/domain/secrets.ts'
import { basic, issueToken, PASSWORD, seed, startServer, type TestServer } from '../helpers.ts'
import { signedIn } from '../pages-helpers.ts'

// FUZZ_MODE=long (pnpm fuzz): several seeds, 10,000 requests in all
const PLAN = fuzzPlan(20261122)
/** A query string from the parameters present, each value percent-encoded. */
const query = (params: Record<string, string | null>) =>
  Object.entries(params)
    .filter((entry): entry is [string, string] => entry[1] !== null)
    .map(([k, v]) => `${k}=${percentEncode(v)}`)
    .join('&')

/**
 * Authorization and code-exchange requests of a registered client with a bent version of one of
 * its own redirect URIs: only together do client_id and redirect_uri reach the matching and
 * what follows it (error redirects, pages, consent), which random pairs almost never do.
 */
function redirectScenarios(
  clients: Array<{ uid: string; redirectUris: string[]; basic?: string }>,
  session: string,
): Array<{ weight: number; request: fc.Arbitrary<FuzzRequest> }> {
  const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: null, freq: 3 })
  const authorize = fc
    .constantFrom(...clients)
    .chain((client) =>
      fc.record({
        client: fc.constant(client),
        redirect: hostileRedirectUris(client.redirectUris),
        responseType: optional(fc.constantFrom('code', 'token', 'x', 'code token', '')),
        scope: optional(fc.constantFrom('api', 'read_user', 'openid profile', 'sudo', '', 'api read_user')),
        state: optional(hostileString()),
        challenge: optional(fc.constantFrom('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', 'short', '')),
        method: optional(fc.constantFrom('S256', 'plain', 'x')),
        signedIn: fc.boolean(),
      }),
    )
    .map(
      (r): FuzzRequest => ({
        method: 'GET',
        operation: 'GET /oauth/authorize',
        target: `/oauth/authorize?${query({
          client_id: r.client.uid,
          redirect_uri: r.redirect,
          response_type: r.responseType,
          scope: r.scope,
          state: r.state,
          code_challenge: r.challenge,
          code_challenge_method: r.method,
        })}`,
        headers: r.signedIn ? [['Cookie', session]] : [],
      }),
    )
  const exchange = fc
    .constantFrom(...clients.filter((c) => c.basic))
    .chain((client) =>
      fc.record({
        client: fc.constant(client),
        redirect: hostileRedirectUris(client.redirectUris),
        code: hostileString(),
      }),
    )
    .map(
      (r): FuzzRequest => ({
        method: 'POST',
        operation: 'POST /oauth/token',
        target: '/oauth/token',
        headers: [
          ['Authorization', r.client.basic as string],
          ['Content-Type', 'application/x-www-form-urlencoded'],
        ],
        body: query({ grant_type: 'authorization_code', code: r.code, redirect_uri: r.redirect }),
      }),
    )
  return [
    { weight: 2, request: authorize },
    { weight: 1, request: exchange },
  ]
}

const TABLES = [
  'users',
  'sessions',
  'applications',
  'authorization_codes',
  'access_tokens',
  'refresh_tokens',
  'personal_access_tokens',
  'consents',
  'signing_keys',
] as const

// framework-level errors (404, 413, 415, validation) come as RFC 6749 or GitLab bodies
const ERROR_SCHEMA = {
  anyOf: [
    {
      type: 'object',
      required: ['error'],
      properties: { error: { type: 'string' }, error_description: { type: 'string' } },
    },
    { type: 'object', required: ['message'], properties: { message: {} } },
  ],
}

describe('OpenAPI fuzzing of the OAuth server', () => {
  let server: TestServer

  let fixtures: Awaited<ReturnType<typeof prepare>>
  beforeAll(async () => {
    server = await startServer({ trustedProxies: ['127.0.0.1'] })
    fixtures = await prepare()
  })
  afterAll(async () => server?.close())

  async function prepare() {
    const data = await seed(server.db, server.settings.secretKey)
    const owned = await createApplication(server.db, {
      name: 'Registered by alice',
      redirectUris: ['https://alice-app.example/cb', 'http://[::1]/native'],
      scopes: ['read_user'],
      confidential: false,
      ownerId: data.alice.id,
    })
    const bearer = await issueToken(server, {
      applicationId: data.web.id,
      userId: data.alice.id,
      scopes: ['api', 'read_user', 'openid'],
      refresh: true,
    })
    const spaToken = await issueToken(server, {
      applicationId: data.spa.id,
      userId: data.alice.id,
      scopes: ['read_user'],
    })
    const pat = await createPersonalAccessToken(server.db, { username: 'alice', name: 'fuzz', scopes: ['api'] })
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const session = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
    return { data, owned: owned.application, bearer, spaToken, pat, session }
  }

  /**
   * Every row of every table, in a stable order: a rejected request must leave it identical.
   * One column is left out: a personal access token's `last_used_at` records that the token
   * authenticated, which stays true when the operation is then refused (404, 403 scope).
   */
  /** Every row of every table, one line each, read in one statement (two of them per request). */
  async function snapshot(): Promise<string> {
    const parts = TABLES.map(
      (table) => sql`${`${table}:`} || coalesce((
        select string_agg((to_jsonb(t) - 'last_used_at')::text, E'\n' order by t::text) from ${sql.table(table)} t
      ), '')`,
    )
    const result = await sql<{ snapshot: string }>`select concat_ws(E'\n', ${sql.join(parts)}) as snapshot`.execute(
      server.db,
    )
    return result.rows[0]?.snapshot ?? ''
  }

  for (const seed of PLAN.seeds) {
    it(`survives ${PLAN.runs} generated and hostile requests (seed ${seed})`, async () => {
      const { data, owned, bearer, spaToken, pat, session } = fixtures
      const tokens = [bearer.access_token, spaToken.access_token, pat.token, bearer.refresh_token as string]
      const clients = [
        { id: data.web.uid, secret: data.web.secret },
        { id: data.spa.uid, secret: '' },
        { id: data.other.uid, secret: 'not its secret' },
      ]
      const registered = [...data.web.redirect_uris, ...data.spa.redirect_uris, ...owned.redirect_uris]
      const document = (await server.app.inject('/openapi.json')).json()
      const report = await fuzzService({
        port: Number(new URL(server.url).port),
        document,
        runs: PLAN.runs,
        seed,
        errorSchema: ERROR_SCHEMA,
        credentials: [
          [['Authorization', `Bearer ${bearer.access_token}`]],
          [['Authorization', `Bearer ${spaToken.access_token}`]],
          [['PRIVATE-TOKEN', pat.token]],
          [['Authorization', basic(data.web.uid, data.web.secret)]],
          [['Authorization', basic(data.spa.uid, '')]],
          [['Cookie', session]],
        ],
        parameters: {
          redirect_uri: hostileRedirectUris(registered),
          client_id: [data.web.uid, data.spa.uid, data.other.uid, owned.uid],
        },
        // every header the server reads
        headers: {
          authorization: authorizationValues({ tokens, clients }),
          'private-token': secretHeaderValues([pat.token], PREFIX.personalAccessToken),
          cookie: cookieValues(['campus_session', '__Host-campus_session'], [session]),
          'content-type': contentTypeValues(),
          'x-request-id': requestIdValues(),
          'x-forwarded-for': forwardedForValues(),
          forwarded: forwardedValues(),
          'x-real-ip': forwardedForValues(),
        },
        scenarios: redirectScenarios(
          [
            { uid: data.web.uid, redirectUris: data.web.redirect_uris, basic: basic(data.web.uid, data.web.secret) },
            { uid: data.spa.uid, redirectUris: data.spa.redirect_uris },
            { uid: owned.uid, redirectUris: owned.redirect_uris },
          ],
          session,
        ),
        // Swagger UI is a third-party static bundle, not this server's surface
        skip: (_method, path) => path.startsWith('/docs'),
        snapshot,
      })
      console.log(
        `OAuth fuzzing, seed ${seed}: ${report.requests} requests, statuses ${JSON.stringify(report.byStatus)}`,
      )
      expect(report.requests).toBe(PLAN.runs)
      // only the HTTP parser answers before any route (URI or headers too long)
      expect(report.undocumented.filter((entry) => !/ (414|431)$/.test(entry))).toEqual([])
      expect(Object.keys(report.byStatus).some((s) => s.startsWith('2'))).toBe(true)
    })
  }
})
