/**
 * `pnpm energy <command>`: administration of the data API, and `login` / `export` as a client of
 * the running services, in the shared command-line shape (JSON on stdout, progress on stderr;
 * usage mistakes exit 2, failures 1).
 */
import {
  type Command,
  commandFailed,
  openMigratedDatabase,
  parseFlags,
  requiredFlag,
  runCommandLine,
  serviceUrl,
  usageError,
} from '@campus/shared'
import type { Kysely } from 'kysely'
import type pg from 'pg'
import { GROUP_NAMES, type GroupName } from './catalogue/groups.ts'
import { exportData, login, tokenFile } from './client/commands.ts'
import { alertCreate, alertDelete, alertList } from './commands/alerts.ts'
import { brokerCredentials } from './commands/broker-credentials.ts'
import { keyCreate, keyList, keyRevoke } from './commands/keys.ts'
import { setLiveFrom } from './commands/live-from.ts'
import { emissionsImport, ratesList, tariffsImport } from './commands/rates.ts'
import { refreshRollups } from './commands/rollups.ts'
import { demo, demoKey, seed } from './commands/seed.ts'
import { virtualCreate, virtualDelete, virtualList } from './commands/virtual-meters.ts'
import { loadEnergyConfig } from './config.ts'
import type { EnergyDatabase } from './db/schema.ts'
import { TOPIC_ROOT } from './domain/broker-access.ts'
import { importFiles } from './import/import-csv.ts'
import { listQuarantine, quarantinedPayload, replayQuarantine } from './repositories/quarantine.ts'
import { buildCalendar } from './repositories/rollups.ts'
import { DEMO_DAYS, energyService, FIRST_PARTY_CLIENT_ID } from './service.ts'

interface Context {
  db: Kysely<EnergyDatabase>
  pool: pg.Pool
  /** Where the running service answers, for the hints the demo prints. */
  baseUrl: string
  /** ENERGY_TIMEZONE: the zone of the rollups' days and months. */
  zone: string
}

/** Before a write: the rollups' days and months cut in the service's zone (once; a first start of an old database takes a while). */
const calendar = ({ pool, zone }: Context) =>
  buildCalendar(pool, zone, (table, seconds) =>
    log(`rollups: the days and months of ${zone} for ${table} built in ${seconds.toFixed(1)} s`),
  )

const log = (line: string) => process.stderr.write(`${line}\n`)

/** The one FILE of a command that takes one. */
function oneFile(args: string[], command: string): string {
  const { positionals } = parseFlags(args, {}, { positionals: true })
  if (positionals.length !== 1) throw usageError(`${command} takes one FILE`)
  return positionals[0] as string
}

/** Demo window seeded by `pnpm start` on an empty database. */

/**
 * Where the services answer unless told: ENERGY_OAUTH_ISSUER / ENERGY_URL, else OAUTH_PORT /
 * ENERGY_PORT, else the ports the running `pnpm start` announced, else the default ports.
 */
const DEFAULT_ISSUER =
  process.env.ENERGY_OAUTH_ISSUER ?? serviceUrl({ name: 'oauth', portEnv: 'OAUTH_PORT', defaultPort: 3000 })
const DEFAULT_DATA_URL = process.env.ENERGY_URL ?? serviceUrl(energyService)

const commands: Record<string, Command<Context>> = {
  login: {
    usage: `login [--client-id ID (default ${FIRST_PARTY_CLIENT_ID})] [--issuer URL] [--scope "read_energy"]`,
    opens: false,
    run(_context, args) {
      const { values: v } = parseFlags(args, {
        'client-id': { type: 'string', default: process.env.ENERGY_CLI_CLIENT_ID ?? FIRST_PARTY_CLIENT_ID },
        issuer: { type: 'string', default: DEFAULT_ISSUER },
        scope: { type: 'string', default: 'read_energy' },
      })
      const issuer = requiredFlag(v.issuer, 'issuer').replace(/\/+$/, '')
      return login(
        { issuer, clientId: requiredFlag(v['client-id'], 'client-id'), scope: v.scope, file: tokenFile() },
        log,
      )
    },
  },
  export: {
    usage: `export --group ${GROUP_NAMES.join('|')} --from DATETIME --to DATETIME (UTC unless given an offset) [--format csv|txt|raw] [--output FILE] [--url URL]`,
    opens: false,
    run(_context, args) {
      const { values: v } = parseFlags(args, {
        group: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        format: { type: 'string', default: 'csv' },
        output: { type: 'string' },
        url: { type: 'string', default: DEFAULT_DATA_URL },
      })
      return exportData(
        {
          url: v.url,
          group: requiredFlag(v.group, 'group'),
          from: requiredFlag(v.from, 'from'),
          to: requiredFlag(v.to, 'to'),
          format: v.format,
          output: v.output,
          file: tokenFile(),
        },
        process.stdout,
      )
    },
  },
  'key:create': {
    usage: 'key:create --name NAME [--endpoint PATTERN]... [--expires DATE]',
    run({ db }, args) {
      const { values } = parseFlags(args, {
        name: { type: 'string' },
        endpoint: { type: 'string', multiple: true },
        expires: { type: 'string' },
      })
      return keyCreate(db, { name: values.name, endpoints: values.endpoint, expires: values.expires })
    },
  },
  'datalogger:credentials': {
    usage:
      'datalogger:credentials (ID | --ingest NAME | --mosquitto FILE) [--topic-root ROOT]     (MQTT username and password; --mosquitto writes the dynamic-security file)',
    run({ db }, args) {
      const { values, positionals } = parseFlags(
        args,
        { ingest: { type: 'string' }, mosquitto: { type: 'string' }, 'topic-root': { type: 'string' } },
        { positionals: true },
      )
      if (positionals.length > 1) throw usageError('datalogger:credentials takes one datalogger ID')
      return brokerCredentials(db, {
        id: positionals[0],
        ingest: values.ingest,
        mosquitto: values.mosquitto,
        root: values['topic-root'] ?? process.env.MQTT_TOPIC_ROOT ?? TOPIC_ROOT,
      })
    },
  },
  'key:list': {
    usage: 'key:list',
    run({ db }, args) {
      parseFlags(args, {})
      return keyList(db)
    },
  },
  'key:revoke': {
    usage: 'key:revoke (--id ID | --name NAME)',
    run({ db }, args) {
      const { values } = parseFlags(args, { id: { type: 'string' }, name: { type: 'string' } })
      return keyRevoke(db, values)
    },
  },
  seed: {
    usage: 'seed [--from DATE] [--to DATE] [--seed N]',
    async run(context, args) {
      const { values } = parseFlags(args, {
        from: { type: 'string' },
        to: { type: 'string' },
        seed: { type: 'string' },
      })
      await calendar(context)
      return seed(context.pool, values, log)
    },
  },
  import: {
    usage: `import FILE... [--group ${GROUP_NAMES.join('|')}]`,
    async run(context, args) {
      const { values, positionals } = parseFlags(args, { group: { type: 'string' } }, { positionals: true })
      if (positionals.length === 0) throw usageError('import needs at least one FILE')
      const group = values.group
      if (group !== undefined && !(GROUP_NAMES as string[]).includes(group)) {
        throw usageError(`--group must be one of ${GROUP_NAMES.join(', ')}`)
      }
      await calendar(context)
      return importFiles(context.pool, positionals, { group: group as GroupName | undefined })
    },
  },
  'quarantine:list': {
    usage: 'quarantine:list [--all] [--limit N]',
    run({ pool }, args) {
      const { values } = parseFlags(args, { all: { type: 'boolean' }, limit: { type: 'string', default: '1000' } })
      const limit = Number(values.limit)
      if (!Number.isInteger(limit) || limit < 1) throw usageError('--limit is a positive integer')
      return listQuarantine(pool, { all: values.all === true, limit })
    },
  },
  'quarantine:payload': {
    usage: 'quarantine:payload --id PAYLOAD_ID     (the bytes of a quarantined message, as kept, on stdout)',
    async run({ pool }, args) {
      const { values } = parseFlags(args, { id: { type: 'string' } })
      const id = Number(values.id)
      if (!Number.isSafeInteger(id) || id < 1) throw usageError('--id is a payload_id of quarantine:list')
      const payload = await quarantinedPayload(pool, id)
      if (!payload) throw commandFailed(`no quarantined message ${id}`)
      await new Promise<void>((resolve, reject) => process.stdout.write(payload, (e) => (e ? reject(e) : resolve())))
      return undefined
    },
  },
  'quarantine:replay': {
    usage: 'quarantine:replay (--id ID... | --all)',
    async run(context, args) {
      const { values } = parseFlags(args, { id: { type: 'string', multiple: true }, all: { type: 'boolean' } })
      const ids = (values.id ?? []).map(Number)
      const all = values.all === true
      if (all === ids.length > 0) throw usageError('quarantine:replay takes --id ID (one or more) or --all')
      if (ids.some((id) => !Number.isSafeInteger(id) || id < 1)) throw usageError('--id is a quarantine row id')
      await calendar(context)
      return replayQuarantine(context.pool, all ? 'all' : ids)
    },
  },
  'meter:live-from': {
    usage: 'meter:live-from --meter ID (--from DATETIME | --clear)',
    run({ pool }, args) {
      const { values } = parseFlags(args, {
        meter: { type: 'string' },
        from: { type: 'string' },
        clear: { type: 'boolean' },
      })
      return setLiveFrom(pool, values)
    },
  },
  'rollups:refresh': {
    usage: 'rollups:refresh --from DATE --to DATE',
    async run(context, args) {
      const { values } = parseFlags(args, { from: { type: 'string' }, to: { type: 'string' } })
      await calendar(context)
      return refreshRollups(context.pool, values)
    },
  },
  'alert:create': {
    usage:
      'alert:create --kind stale|threshold|night-baseline|quarantine [--name NAME] [--datalogger ID] [--meter ID] ' +
      '[--minutes N] [--above|--below LEVEL --for QUARTERS] [--percent P] [--count N] [--for-seconds S] [--severity warning]',
    run({ pool }, args) {
      const text = { type: 'string' } as const
      const { values } = parseFlags(args, {
        kind: text,
        name: text,
        datalogger: text,
        meter: text,
        minutes: text,
        above: text,
        below: text,
        for: text,
        percent: text,
        count: text,
        'for-seconds': text,
        severity: text,
      })
      return alertCreate(pool, values)
    },
  },
  'alert:list': {
    usage: 'alert:list',
    run({ pool }, args) {
      parseFlags(args, {})
      return alertList(pool)
    },
  },
  'alert:delete': {
    usage: 'alert:delete --id ID',
    run({ pool }, args) {
      const { values } = parseFlags(args, { id: { type: 'string' } })
      return alertDelete(pool, values.id)
    },
  },
  'virtual:create': {
    usage: 'virtual:create --id ID --name TEXT --formula "920 - 921 - 922" (inputs: meters of one kind)',
    async run(context, args) {
      const { values } = parseFlags(args, {
        id: { type: 'string' },
        name: { type: 'string' },
        formula: { type: 'string' },
      })
      await calendar(context)
      return virtualCreate(context.pool, values)
    },
  },
  'virtual:list': {
    usage: 'virtual:list',
    run({ pool }, args) {
      parseFlags(args, {})
      return virtualList(pool)
    },
  },
  'virtual:delete': {
    usage: 'virtual:delete --id ID',
    run({ pool }, args) {
      const { values } = parseFlags(args, { id: { type: 'string' } })
      return virtualDelete(pool, values)
    },
  },
  'tariffs:import': {
    usage: 'tariffs:import FILE.csv (commodity,valid_from,valid_to,days,from_time,to_time,price,currency)',
    run({ pool, zone }, args) {
      return tariffsImport(pool, oneFile(args, 'tariffs:import'), zone)
    },
  },
  'tariffs:list': {
    usage: 'tariffs:list',
    run({ pool }, args) {
      parseFlags(args, {})
      return ratesList(pool, 'tariff')
    },
  },
  'emissions:import': {
    usage:
      'emissions:import FILE.csv (commodity,valid_from,valid_to,kg_co2e_per_unit or commodity,time,kg_co2e_per_unit)',
    run({ pool, zone }, args) {
      return emissionsImport(pool, oneFile(args, 'emissions:import'), zone)
    },
  },
  'emissions:list': {
    usage: 'emissions:list',
    run({ pool }, args) {
      parseFlags(args, {})
      return ratesList(pool, 'emission')
    },
  },
  'demo:key': {
    usage: 'demo:key [--days N]',
    run({ db, pool, baseUrl }, args) {
      const { values } = parseFlags(args, { days: { type: 'string' } })
      return demoKey(db, pool, { baseUrl, days: demoDays(values.days) })
    },
  },
  demo: {
    usage: 'demo [--days N]',
    async run(context, args) {
      const { values } = parseFlags(args, { days: { type: 'string' } })
      const days = demoDays(values.days)
      await calendar(context)
      return demo(context.db, context.pool, { days, baseUrl: context.baseUrl, zone: context.zone }, log)
    },
  },
}

/** --days of the demo commands: the days a fresh demo seeds up to now. */
function demoDays(value: string | undefined): number {
  const days = value === undefined ? DEMO_DAYS : Number(value)
  if (!Number.isInteger(days) || days < 1) throw usageError('--days must be a positive integer')
  return days
}

runCommandLine({
  program: 'pnpm energy',
  commands,
  async open() {
    const config = loadEnergyConfig()
    const database = await openMigratedDatabase<EnergyDatabase>(energyService, config)
    return {
      context: {
        db: database.db,
        pool: database.pool,
        baseUrl: serviceUrl(energyService),
        zone: config.ENERGY_TIMEZONE,
      },
      close: () => database.close(),
    }
  },
})
