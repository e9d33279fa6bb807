import { isIP } from 'node:net'
import Type, { type Static, type TObject, type TSchema } from 'typebox'
import Value from 'typebox/value'

/** A configuration value that is missing or malformed; its message is one line naming the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** Defaults of the variables below that processes other than the services also read. */
export const DEFAULT_HOST = '127.0.0.1'
export const DEFAULT_DATA_DIR = '.data'

/** Variables both services read. */
export const CommonConfig = {
  HOST: Type.String({ default: DEFAULT_HOST, minLength: 1, description: 'Interface to listen on' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  DATA_DIR: Type.String({ default: DEFAULT_DATA_DIR, description: 'Where the embedded database keeps its files' }),
  MIGRATE_ON_START: Type.Optional(Type.Boolean({ description: 'Apply pending migrations before listening' })),
  METRICS_TOKEN: Type.Optional(
    Type.String({
      minLength: 16,
      description: 'Bearer token /metrics requires; unset = /metrics answers clients on this machine only',
    }),
  ),
}

export const Port = (fallback: number) => Type.Integer({ minimum: 0, maximum: 65535, default: fallback })
export const DatabaseUrl = () =>
  Type.Optional(Type.String({ pattern: '^postgres(ql)?://', description: 'postgres:// URL; unset = embedded PGlite' }))

/** `10.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`: an IP address, or a CIDR range with a prefix the family allows. */
function isAddressOrRange(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || rest.length) return false
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))
}

/** The entries of an address list, separated by commas and/or spaces. */
export function parseAddressList(value: string | undefined): string[] {
  return (value ?? '').split(/[\s,]+/).filter(Boolean)
}

const ADDRESS_LIST = 'a list of IP addresses or CIDR ranges separated by commas (e.g. 10.0.0.0/8, ::1)'

/** A list of addresses or CIDR ranges, e.g. the reverse proxies whose X-Forwarded-For is believed. */
export const AddressList = (description: string) =>
  Type.Optional(
    Type.Refine(
      Type.String({ description: `${description}; ${ADDRESS_LIST}` }),
      (value) => parseAddressList(value).every(isAddressOrRange),
      () => ADDRESS_LIST,
    ),
  )

/**
 * `<SERVICE>_TRUSTED_PROXIES`, the same rule in every service: the reverse proxies whose
 * X-Forwarded-For is believed, so that rate limits, throttles and logs see each client's own
 * address (`serverOptions` turns the list into Fastify's `trustProxy`); unset, none is, and a
 * client cannot choose its address by sending the header.
 */
export const TrustedProxies = () =>
  AddressList(
    'Reverse proxies whose X-Forwarded-For is believed (the client address of rate limits, throttling and logs); unset = none',
  )

function describe(schema: TSchema): string {
  const s = schema as Record<string, unknown>
  const refinement = (s['~refine'] as Array<{ error: (value: unknown) => string }> | undefined)?.[0]
  if (refinement) return refinement.error(undefined)
  if (Array.isArray(s.anyOf)) {
    const values = (s.anyOf as Array<Record<string, unknown>>).map((o) => o.const).filter((v) => v !== undefined)
    if (values.length) return `one of ${values.join(', ')}`
  }
  if (s.type === 'integer') {
    const range = s.minimum !== undefined && s.maximum !== undefined ? ` from ${s.minimum} to ${s.maximum}` : ''
    return `an integer${range}`
  }
  if (s.type === 'number') return 'a number'
  if (s.type === 'boolean') return 'true or false'
  if (typeof s.pattern === 'string') return `a string matching ${s.pattern}`
  if (typeof s.minLength === 'number') return `a string of at least ${s.minLength} characters`
  return 'a valid value'
}

/**
 * Reads the variables named by `schema` from `env`, converts and validates them.
 * Empty strings count as unset so `FOO= cmd` falls back to the default.
 */
export function loadConfig<T extends TObject>(schema: T, env: NodeJS.ProcessEnv = process.env): Static<T> {
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys(schema.properties)) {
    const value = env[key]
    if (value !== undefined && value !== '') raw[key] = value
  }
  // Default and Convert work in place: keep the raw strings for the error message
  const converted = Value.Convert(schema, Value.Default(schema, { ...raw })) as Record<string, unknown>
  for (const key of Object.keys(schema.properties)) {
    const property = schema.properties[key] as TSchema
    const value = converted[key]
    if (value === undefined) {
      if (schema.required?.includes(key))
        throw new ConfigError(`Invalid configuration: ${key} is required (${describe(property)})`)
      continue
    }
    if (!Value.Check(property, value)) {
      throw new ConfigError(
        `Invalid configuration: ${key} must be ${describe(property)} (got ${JSON.stringify(raw[key])})`,
      )
    }
  }
  return converted as Static<T>
}

/** Runs an entry point; configuration errors print one line and exit 1, anything else exits 1 with its message. */
export function runMain(main: () => Promise<unknown>): void {
  main().catch((error: unknown) => {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`)
    } else {
      const message = error instanceof Error ? error.message : String(error)
      process.stderr.write(`error: ${message}\n`)
      if (process.env.DEBUG) console.error(error)
    }
    process.exit(1)
  })
}
