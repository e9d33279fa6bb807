import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import fc from 'fast-check'
import type { OpenAPIV3_1 } from 'openapi-types'
import { fromSchema, hostileString } from './hostile.ts'
import { type RawResponse, rawRequest } from './raw-http.ts'

type Schema = Record<string, unknown>
type Operation = OpenAPIV3_1.OperationObject
type Parameter = OpenAPIV3_1.ParameterObject

export interface FuzzRequest {
  method: string
  target: string
  headers: Array<[string, string]>
  body?: string
  operation: string
}

export interface FuzzOptions {
  port: number
  document: OpenAPIV3_1.Document
  /** Requests to send in all. */
  runs: number
  seed?: number
  /** Header pairs that authenticate (an API key, a bearer token); sent on some requests. */
  credentials?: Array<Array<[string, string]>>
  /** Body shape of errors not documented per route (framework 404/413/415...). */
  errorSchema: Schema
  /** Operations to leave out, e.g. `GET /docs`. */
  skip?: (method: string, path: string) => boolean
  /** A fingerprint of the database; it must not change across rejected requests. */
  snapshot?: () => Promise<string>
  /**
   * Values of their own for named parameters (query, path or form field), e.g. redirect URIs
   * bent every way for `redirect_uri`, or a list of known good values (client ids); mixed with
   * schema-valid and hostile values.
   */
  parameters?: Record<string, fc.Arbitrary<string> | readonly string[]>
  /** Every header the service reads, with the values to try; a request carries up to three. */
  headers?: Record<string, fc.Arbitrary<string>>
  /**
   * Requests shaped by hand where parameters only matter together (a client id with a bent
   * version of its own redirect URI), mixed with the generated ones by weight (those weigh 10).
   */
  scenarios?: Array<{ weight: number; request: fc.Arbitrary<FuzzRequest> }>
}

/** How much to fuzz: the short mode of the test suite, or the long mode of `pnpm fuzz`. */
export interface FuzzPlan {
  mode: 'short' | 'long'
  /** Requests per seed. */
  runs: number
  seeds: number[]
}

/**
 * `FUZZ_MODE=long` (`pnpm fuzz`): 4 seeds of 2,500 requests, 10,000 in all; otherwise one seed of
 * 3,000. `FUZZ_RUNS` (per seed), `FUZZ_SEED` (the first seed) and `FUZZ_SEEDS` (how many) override.
 */
export function fuzzPlan(defaultSeed: number, env: NodeJS.ProcessEnv = process.env): FuzzPlan {
  const mode = env.FUZZ_MODE === 'long' ? 'long' : 'short'
  const first = Number(env.FUZZ_SEED ?? defaultSeed)
  const count = Number(env.FUZZ_SEEDS ?? (mode === 'long' ? 4 : 1))
  const runs = Number(env.FUZZ_RUNS ?? (mode === 'long' ? 2500 : 3000))
  return { mode, runs, seeds: Array.from({ length: count }, (_, i) => first + i) }
}

export interface FuzzReport {
  requests: number
  byStatus: Record<string, number>
  /** `METHOD /path status` answered (with the operation's own method) but not declared in its responses. */
  undocumented: string[]
}

const LEAKS: Array<[RegExp, string]> = [
  [/\bat .+:\d+:\d+\)?$/m, 'stack frame'],
  [/node_modules|\.ts:\d+|\.js:\d+/, 'source path'],
  [
    /syntax error at or near|relation "[^"]+" does not exist|violates (unique|foreign key|check) constraint/i,
    'SQL error',
  ],
  [/ECONNREFUSED|EADDRINUSE|TypeError|ReferenceError|RangeError/, 'internal error name'],
]

const METHODS_WITHOUT_BODY = new Set(['GET', 'HEAD', 'DELETE'])

function operations(document: OpenAPIV3_1.Document, skip?: FuzzOptions['skip']) {
  const list: Array<{ method: string; path: string; operation: Operation }> = []
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
      const operation = item?.[method]
      if (operation && !skip?.(method.toUpperCase(), path)) list.push({ method: method.toUpperCase(), path, operation })
    }
  }
  if (!list.length) throw new Error('the document describes no operation to fuzz')
  return list
}

function asString(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '')
}

/** Sometimes a schema-valid value, sometimes a hostile one; for a named parameter, often its own. */
function ownValues(parameters: FuzzOptions['parameters'] = {}): Record<string, fc.Arbitrary<string>> {
  return Object.fromEntries(
    Object.entries(parameters).map(([name, values]) => [
      name,
      Array.isArray(values) ? fc.constantFrom(...(values as string[])) : (values as fc.Arbitrary<string>),
    ]),
  )
}

function valueGenerator(parameters: Record<string, fc.Arbitrary<string>>) {
  return (name: string | undefined, schema: Schema | undefined): fc.Arbitrary<string> => {
    const general = fc.oneof(
      { weight: 4, arbitrary: fromSchema(schema).map(asString) },
      { weight: 1, arbitrary: hostileString() },
    )
    const own = name === undefined ? undefined : parameters[name]
    return own ? fc.oneof({ weight: 3, arbitrary: own }, { weight: 2, arbitrary: general }) : general
  }
}

function encode(value: string, raw: boolean): string {
  let out = ''
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte)
    // raw: bytes as an attacker types them (control and non-ASCII bytes included), minus what ends the target
    const keep = raw ? byte !== 0x20 && byte !== 0x0d && byte !== 0x0a && c !== '#' : /[A-Za-z0-9\-_.~]/.test(c)
    out += keep ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** Percent-encodes every byte but the unreserved ones (lone surrogates included, as U+FFFD). */
export const percentEncode = (value: string): string => encode(value, false)

function requestArbitrary(options: FuzzOptions): fc.Arbitrary<FuzzRequest> {
  const ops = operations(options.document, options.skip)
  const own = ownValues(options.parameters)
  const valueFor = valueGenerator(own)
  const readHeaders = Object.entries(options.headers ?? {})
  const extraHeaders: fc.Arbitrary<Array<[string, string]>> = readHeaders.length
    ? fc.array(
        fc.constantFrom(...readHeaders).chain(([name, values]) => values.map((v): [string, string] => [name, v])),
        { maxLength: 3 },
      )
    : fc.constant([])
  return fc.constantFrom(...ops).chain(({ method, path, operation }) => {
    const parameters = (operation.parameters ?? []) as Parameter[]
    const query = parameters.filter((p) => p.in === 'query')
    const pathParams = parameters.filter((p) => p.in === 'path')
    const headerParams = parameters.filter((p) => p.in === 'header')
    const bodyContent = (operation.requestBody as OpenAPIV3_1.RequestBodyObject | undefined)?.content ?? {}
    const bodyTypes = Object.keys(bodyContent)
    return fc
      .record({
        pathValues: fc.tuple(...pathParams.map((p) => valueFor(p.name, p.schema as Schema)), fc.constant('')),
        queryValues: fc.array(
          fc.oneof(
            {
              weight: 4,
              arbitrary: query.length
                ? fc
                    .constantFrom(...query)
                    .chain((q) => fc.tuple(fc.constant(q.name), valueFor(q.name, q.schema as Schema)))
                : fc.tuple(fc.constant('q'), hostileString()),
            },
            { weight: 1, arbitrary: fc.tuple(hostileString(), hostileString()) },
          ),
          { maxLength: 4 },
        ),
        readHeaders: extraHeaders,
        headerValues: fc.array(
          fc.tuple(
            headerParams.length ? fc.constantFrom(...headerParams.map((h) => h.name)) : fc.constant('x-custom'),
            hostileString().map((v) => v.replace(/[\r\n]/g, ' ')),
          ),
          { maxLength: 1 },
        ),
        credentials: options.credentials?.length
          ? fc.option(fc.constantFrom(...options.credentials), { freq: 2 })
          : fc.constant(null),
        rawEncoding: fc.nat(5).map((n) => n === 0),
        // one request in twelve with a method the route does not have (fc.option's freq is the chance of null)
        wrongMethod: fc.oneof(
          { weight: 11, arbitrary: fc.constant(null) },
          { weight: 1, arbitrary: fc.constantFrom('PUT', 'DELETE', 'PATCH', 'OPTIONS') },
        ),
        body: bodyTypes.length
          ? fc.oneof(
              fromSchema((bodyContent[bodyTypes[0] as string]?.schema ?? {}) as Schema, 0, own).map((v) => ({
                type: bodyTypes[0] as string,
                text:
                  bodyTypes[0] === 'application/x-www-form-urlencoded' && v && typeof v === 'object'
                    ? new URLSearchParams(
                        Object.entries(v).map(([k, x]): [string, string] => [k, asString(x)]),
                      ).toString()
                    : JSON.stringify(v),
              })),
              fc.record({
                type: fc.constantFrom(
                  'application/json',
                  'text/plain',
                  'application/x-www-form-urlencoded',
                  'application/xml',
                ),
                text: fc.oneof(hostileString(), fc.constant('{"a":'), fc.constant('a=1&a=2&a[]=3')),
              }),
              fc.constant({ type: 'application/json', text: `{"pad":"${'x'.repeat(2 * 1024 * 1024)}"}` }),
            )
          : fc.option(fc.record({ type: fc.constant('application/json'), text: hostileString() }), { freq: 8 }),
      })
      .map((parts) => {
        let target = path
        pathParams.forEach((p, i) => {
          target = target.replace(`{${p.name}}`, encode(parts.pathValues[i] ?? '', parts.rawEncoding) || 'x')
        })
        const search = parts.queryValues
          .map(([k, v]) => `${encode(k, parts.rawEncoding)}=${encode(v, parts.rawEncoding)}`)
          .join('&')
        const headers: Array<[string, string]> = [
          ...parts.headerValues,
          ...parts.readHeaders,
          ...(parts.credentials ?? []),
        ]
        const finalMethod = parts.wrongMethod ?? method
        const request: FuzzRequest = {
          method: finalMethod,
          target: search ? `${target}?${search}` : target,
          headers,
          operation: `${method} ${path}`,
        }
        if (parts.body && !METHODS_WITHOUT_BODY.has(finalMethod)) {
          headers.push(['Content-Type', parts.body.type])
          request.body = parts.body.text
        }
        return request
      })
  })
}

/** The schema documented for this status, if any (exact code, `4XX`, or `default`). */
function documentedSchema(operation: Operation | undefined, status: number): Schema | undefined {
  const responses = operation?.responses ?? {}
  const response = (responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default) as
    | OpenAPIV3_1.ResponseObject
    | undefined
  return response?.content?.['application/json']?.schema as Schema | undefined
}

/**
 * Whether an answer is what the document says of its operation and status: undefined when it is,
 * else why not (no such operation or status, or the body against the documented JSON schema).
 */
export function undocumentedAnswer(
  document: OpenAPIV3_1.Document,
  answer: { method: string; path: string; status: number; body: unknown },
): string | undefined {
  const operation = document.paths?.[answer.path]?.[answer.method.toLowerCase() as OpenAPIV3_1.HttpMethods]
  if (!operation) return `${answer.method} ${answer.path} is not in the document`
  if (!isDocumented(operation, answer.status))
    return `${answer.method} ${answer.path} ${answer.status} is not documented`
  const schema = documentedSchema(operation, answer.status)
  if (!schema) return undefined
  const ajv = new Ajv({ strict: false, allErrors: true })
  addFormats.default(ajv)
  const validate = ajv.compile(schema)
  return validate(answer.body)
    ? undefined
    : `${answer.method} ${answer.path} ${answer.status}: ${ajv.errorsText(validate.errors)}`
}

/**
 * Sends `runs` generated requests (schema-valid and hostile parts mixed) over real HTTP and
 * checks each answer: never 5xx, no stack trace or internals in the body, every 4xx in the
 * documented shape, and (with `snapshot`) the database unchanged by every rejected request.
 */
export async function fuzzService(options: FuzzOptions): Promise<FuzzReport> {
  const ajv = new Ajv({ strict: false, allErrors: false })
  addFormats.default(ajv)
  const errorValidator = ajv.compile(options.errorSchema)
  const byOperation = new Map<string, Operation>()
  for (const { method, path, operation } of operations(options.document))
    byOperation.set(`${method} ${path}`, operation)
  const byStatus: Record<string, number> = {}
  const undocumented = new Set<string>()
  let requests = 0

  const generated = requestArbitrary(options)
  const arbitrary = options.scenarios?.length
    ? fc.oneof(
        { weight: 10, arbitrary: generated },
        ...options.scenarios.map((s) => ({ weight: s.weight, arbitrary: s.request })),
      )
    : generated
  await assertWithCause(
    fc.asyncProperty(arbitrary, async (request) => {
      const before = options.snapshot ? await options.snapshot() : undefined
      let response: RawResponse
      try {
        response = await rawRequest(options.port, request)
      } catch (error) {
        throw new Error(`${request.method} ${request.target.slice(0, 200)}: no answer (${(error as Error).message})`)
      }
      requests++
      byStatus[response.status] = (byStatus[response.status] ?? 0) + 1
      const where = `${request.method} ${request.target.slice(0, 200)} -> ${response.status}`
      if (!(response.status >= 200 && response.status < 500))
        throw new Error(`${where}: ${response.body.slice(0, 300)}`)
      for (const [pattern, what] of LEAKS) {
        if (pattern.test(response.body))
          throw new Error(`${where}: body reveals a ${what}: ${response.body.slice(0, 300)}`)
      }
      if (response.status >= 400) {
        const sameMethod = request.operation.startsWith(`${request.method} `)
        const schema = sameMethod ? documentedSchema(byOperation.get(request.operation), response.status) : undefined
        if (sameMethod && !isDocumented(byOperation.get(request.operation), response.status))
          undocumented.add(`${request.operation} ${response.status}`)
        const isJson = (response.headers['content-type'] ?? '').startsWith('application/json')
        if (schema || isJson) {
          let body: unknown
          try {
            body = JSON.parse(response.body)
          } catch {
            throw new Error(`${where}: error body is not JSON: ${response.body.slice(0, 200)}`)
          }
          const validate = schema ? ajv.compile(schema) : errorValidator
          if (!validate(body)) {
            throw new Error(`${where}: error body ${response.body.slice(0, 200)} does not match the documented shape`)
          }
        } else if (!(response.headers['content-type'] ?? '').startsWith('text/html')) {
          throw new Error(`${where}: error answered with ${response.headers['content-type'] ?? 'no content type'}`)
        }
        const after = options.snapshot ? await options.snapshot() : undefined
        if (before !== after) {
          throw new Error(
            `${where}: the database changed although the request was rejected: ${firstDifference(before, after)}`,
          )
        }
      }
    }),
    { numRuns: options.runs, seed: options.seed, endOnFailure: true },
  )
  return { requests, byStatus, undocumented: [...undocumented].sort() }
}

function isDocumented(operation: Operation | undefined, status: number): boolean {
  const responses = operation?.responses ?? {}
  return String(status) in responses || `${String(status)[0]}XX` in responses || 'default' in responses
}

/** The first line that differs between two snapshots, to say what a rejected request wrote. */
function firstDifference(before = '', after = ''): string {
  const a = before.split('\n')
  const b = after.split('\n')
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `was ${(a[i] ?? '(nothing)').slice(0, 300)} / now ${(b[i] ?? '(nothing)').slice(0, 300)}`
  }
  return ''
}

/** fast-check's report names the counterexample; put the failed check itself first. */
async function assertWithCause<T>(property: fc.IAsyncProperty<T>, parameters: fc.Parameters<T>): Promise<void> {
  try {
    await fc.assert(property, parameters)
  } catch (error) {
    const cause = (error as Error).cause
    throw new Error(`${cause instanceof Error ? cause.message : ''}\n${(error as Error).message}`)
  }
}
