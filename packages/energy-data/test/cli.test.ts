import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase, type TestDatabase } from '@campus/shared/testing'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GROUP_COLUMNS } from '../src/catalogue/groups.ts'
import { seed } from '../src/commands/seed.ts'
import type { EnergyDatabase } from '../src/db/schema.ts'
import { importFiles } from '../src/import/import-csv.ts'
import { energyCli, seeded, startHarness, testDatabase } from './harness.ts'

const dir = mkdtempSync(join(tmpdir(), 'energy-cli-'))

let database: TestDatabase<EnergyDatabase>

/** `pnpm energy ...` as its own process, on the test database or on the one at `url`. */
const cli = (args: string[], url = database.url) => energyCli(url, args)

beforeAll(async () => {
  database = await testDatabase()
})
afterAll(async () => database?.close())

describe('key commands (real processes)', () => {
  it('key:create prints the key once; key:list never shows it; key:revoke ends it', async () => {
    const created = await cli([
      'key:create',
      '--name',
      'dash',
      '--endpoint',
      '/data/*',
      '--endpoint',
      '/metadata/meters/*',
      '--expires',
      '2099-01-01',
    ])
    expect(created.code).toBe(0)
    const key = JSON.parse(created.stdout) as {
      id: number
      key: string
      endpoints: string[]
      expires_at: string
      state: string
    }
    expect(key.key).toMatch(/^edk_[A-Za-z0-9_-]{43}$/)
    expect(key.endpoints).toEqual(['/data/*', '/metadata/meters/*'])
    expect(key.expires_at).toBe('2099-01-01T00:00:00.000Z')
    expect(key.state).toBe('active')

    const listed = await cli(['key:list'])
    expect(listed.code).toBe(0)
    expect(listed.stdout).not.toContain(key.key)
    const list = JSON.parse(listed.stdout) as Array<{ id: number; name: string; prefix: string }>
    expect(list).toContainEqual(expect.objectContaining({ id: key.id, name: 'dash', prefix: key.key.slice(0, 10) }))

    const revoked = await cli(['key:revoke', '--id', String(key.id)])
    expect(revoked.code).toBe(0)
    expect((JSON.parse(revoked.stdout) as { revoked: Array<{ state: string }> }).revoked[0]?.state).toBe('revoked')
    // the command line is right, the work cannot be done: a failure, not a usage mistake
    const again = await cli(['key:revoke', '--id', String(key.id)])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('no active key matches')
  })

  it('refuses bad arguments with exit code 2 and a usage line', async () => {
    const cases = [
      ['key:create'],
      ['key:create', '--name', 'x', '--endpoint', 'data'],
      ['key:create', '--name', 'x', '--expires', 'tomorrow'],
      ['key:create', '--name', 'x', '--bogus'],
      ['nope'],
    ]
    // the processes at once: none of them changes anything
    const results = await Promise.all(cases.map((args) => cli(args)))
    for (const [k, result] of results.entries()) {
      const args = cases[k]!
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.stderr).toContain('usage: pnpm energy')
      expect(result.stdout).toBe('')
    }
  })
})

describe('every command checks the migrations first', () => {
  it('refuses a database with pending migrations, saying how to apply them, and changes nothing', async () => {
    const empty = await createTestDatabase<unknown>('energycli', mkdtempSync(join(tmpdir(), 'no-migrations-')))
    try {
      const cases = [
        ['key:create', '--name', 'x'],
        ['key:list'],
        ['key:revoke', '--id', '1'],
        ['seed', '--from', '2025-05-01', '--to', '2025-05-02'],
        ['import', join(dir, 'missing.csv')],
        ['demo', '--days', '1'],
        ['demo:key'],
      ]
      const results = await Promise.all(cases.map((args) => cli(args, empty.url)))
      for (const [k, result] of results.entries()) {
        const args = cases[k]!
        expect(result.code, args.join(' ')).toBe(1)
        expect(result.stderr).toContain('migration(s) pending')
        expect(result.stderr).toContain('pnpm db:migrate')
        expect(result.stdout).toBe('')
      }
      // only the migrator's own bookkeeping, which the empty test database was made with
      const tables = await sql<{ name: string }>`
        select table_name as name from information_schema.tables where table_schema = 'public'`.execute(empty.db)
      expect(tables.rows.map((t) => t.name)).toEqual(['schema_migrations'])
    } finally {
      await empty.close()
    }
  })
})

describe('seed', () => {
  // three weeks: every hour of the day, three weekends, and enough quarters for gaps and every tag
  const window = { from: '2025-05-05', to: '2025-05-26', seed: '7' }
  const days = 21

  it('fills the estate deterministically with sun-driven PV, weekday loads, gaps and tags', async () => {
    const summary = await seed(database.pool, window)
    expect(summary.meters).toBeGreaterThan(20)
    const db = database.db
    const meters = await db.selectFrom('meters').selectAll().execute()
    for (const m of meters) {
      expect(m.description).toMatch(new RegExp(`^${m.id}\\) \\S`))
      expect(m.type_id).toMatch(/^brick:/)
      expect(m.unit_id).toMatch(/^unit:/)
      expect(m.quantity_id).toMatch(/^quantitykind:/)
    }
    // PV: nothing at night, most around solar noon (about 11:30 UTC in Turin)
    const pv = await sql<{ hour: number; kw: number }>`
      select extract(hour from time_15m at time zone 'UTC')::int as hour, avg(tot_pv) as kw from pv_15m group by 1 order by 1`.execute(
      db,
    )
    const byHour = new Map(pv.rows.map((r) => [r.hour, r.kw]))
    expect(byHour.get(0)).toBe(0)
    expect(byHour.get(22)).toBe(0)
    expect(byHour.get(11)).toBeGreaterThan(200)
    const peakHour = pv.rows.reduce((a, b) => (b.kw > a.kw ? b : a)).hour
    expect(peakHour).toBeGreaterThanOrEqual(10)
    expect(peakHour).toBeLessThanOrEqual(12)
    // radiation moves with it
    const radiation = await sql<{ r: number }>`
      select corr(p.tot_pv, w.global_solar_radiation) as r from pv_15m p join weather_15m w using (time_15m)`.execute(
      db,
    )
    expect(radiation.rows[0]?.r).toBeGreaterThan(0.9)
    // weekday daytime loads above weekend ones
    const load = await sql<{ weekend: boolean; kwh: number }>`
      select extract(isodow from time_15m at time zone 'Europe/Rome') >= 6 as weekend, avg(avg_value) as kwh
      from data_15m where meter_id = 870 and extract(hour from time_15m at time zone 'Europe/Rome') between 10 and 16
      group by 1`.execute(db)
    const weekday = load.rows.find((r) => !r.weekend)?.kwh ?? 0
    const weekend = load.rows.find((r) => r.weekend)?.kwh ?? 0
    expect(weekday).toBeGreaterThan(weekend * 2)
    // a few gaps (fewer rows than quarter hours) and every tag in use
    const counts = await sql<{ n: number }>`
      select (select count(*) from pv_15m) + (select count(*) from weather_15m) + (select count(*) from water_15m)
        + (select count(*) from aulep_15m) + (select count(*) from datacenter_1_15m)
        + (select count(*) from centrali_frigo_15m) as n`.execute(db)
    expect(counts.rows[0]?.n).toBeLessThan(6 * days * 96)
    expect(counts.rows[0]?.n).toBeGreaterThan(6 * days * 96 - 400)
    const tags = await sql<{ tag: string }>`select distinct tag from data_15m order by tag`.execute(db)
    expect(tags.rows.map((r) => r.tag)).toEqual(['estimated', 'interpolated', 'ok', 'suspect'])

    const fingerprint = async (target: TestDatabase<EnergyDatabase>) =>
      (
        await sql<{
          h: string
        }>`select md5(string_agg(time_15m::text || tot_pv::text, ',' order by time_15m)) as h from pv_15m`.execute(
          target.db,
        )
      ).rows[0]?.h
    const twin = await testDatabase(seeded(window))
    try {
      expect(await fingerprint(twin)).toBe(await fingerprint(database))
    } finally {
      await twin.close()
    }
  })
})

describe('import', () => {
  let fresh: TestDatabase<EnergyDatabase>
  beforeAll(async () => {
    fresh = await testDatabase()
    await fresh.db.insertInto('dataloggers').values({ id: 'DL', serial: 'S', ip: '10.0.0.1' }).execute()
    await fresh.db.insertInto('meters').values({ id: 5, description: '5) Test', datalogger_id: 'DL' }).execute()
  })
  afterAll(async () => fresh?.close())

  const write = (name: string, text: string) => {
    const path = join(dir, name)
    writeFileSync(path, text)
    return path
  }

  it('loads a wide group file and a per-meter file, replacing existing rows', async () => {
    const wide = write(
      'water.csv',
      'time_15m,tot_sede_centrale,tot_font_aule_p\n2025-03-30 00:00:00,1.5,0.25\n2025-03-30T00:15:00+00:00,,0.5\n',
    )
    const long = write(
      'meters.csv',
      'time_15m,meter_id,avg_value,min_value,max_value,sum_value,count_value,tag\n2025-03-30T01:00:00+01:00,5,10,9,11,150,15,ok\n"2025-03-30 00:15:00",5,12,11,13,180,15,estimated\n',
    )
    const result = await importFiles(fresh.pool, [wide, long])
    expect(result.imported).toEqual([
      { file: 'water.csv', layout: 'water (wide)', rows: 2 },
      { file: 'meters.csv', layout: 'per meter (long)', rows: 2 },
    ])
    const water = await fresh.db.selectFrom('water_15m').selectAll().orderBy('time_15m').execute()
    expect(
      water.map((r) => [r.time_15m.toISOString(), r.tot_sede_centrale, r.tot_font_aule_p, r.tot_font_corr_sud]),
    ).toEqual([
      ['2025-03-30T00:00:00.000Z', 1.5, 0.25, null],
      ['2025-03-30T00:15:00.000Z', null, 0.5, null],
    ])
    const again = write('water2.csv', 'time_15m,tot_sede_centrale\n2025-03-30 00:00:00,2\n')
    await importFiles(fresh.pool, [again])
    const replaced = await fresh.db
      .selectFrom('water_15m')
      .select('tot_sede_centrale')
      .orderBy('time_15m')
      .executeTakeFirst()
    expect(replaced?.tot_sede_centrale).toBe(2)
    const meter = await fresh.db.selectFrom('data_15m').selectAll().orderBy('time_15m').execute()
    expect(meter.map((r) => [r.time_15m.toISOString(), r.avg_value, r.count_value, r.tag])).toEqual([
      ['2025-03-30T00:00:00.000Z', 10, 15, 'ok'],
      ['2025-03-30T00:15:00.000Z', 12, 15, 'estimated'],
    ])
  })

  it('a per-meter file writes the group columns mirroring its meter, by the mirror rule, and their rollups', async () => {
    const own = await testDatabase()
    try {
      await own.db.insertInto('dataloggers').values({ id: 'DL', serial: 'S', ip: '10.0.0.1' }).execute()
      await own.db.insertInto('meters').values({ id: 861, description: '861) Inverter', datalogger_id: 'DL' }).execute()
      // a value imported into the mirrored column before, where the meter's quarter hour will not be ok
      await importFiles(own.pool, [write('pv-before.csv', 'time_15m,tot_pv_aule_p_i1\n2025-04-01T10:15:00Z,99\n')])
      const long = write(
        'inverter.csv',
        'time_15m,meter_id,avg_value,min_value,max_value,sum_value,count_value,tag\n' +
          '2025-04-01T10:00:00Z,861,10,9,11,150,15,ok\n2025-04-01T10:15:00Z,861,12,11,13,180,15,suspect\n',
      )
      await importFiles(own.pool, [long])
      const pv = await own.pool.query(
        `select time_15m, tot_pv_aule_p_i1 as v from pv_15m where time_15m >= '2025-04-01T10:00:00Z' order by 1`,
      )
      expect(pv.rows.map((r) => [r.time_15m.toISOString(), r.v])).toEqual([
        ['2025-04-01T10:00:00.000Z', 10],
        ['2025-04-01T10:15:00.000Z', null],
      ])
      const aulep = await own.pool.query(`select pv_inv_1 as v from aulep_15m where time_15m = '2025-04-01T10:00:00Z'`)
      expect(aulep.rows).toEqual([{ v: 10 }])
      // the rollups of the mirrored column follow in the same transaction
      const hour = await own.pool.query(
        `select tot_pv_aule_p_i1_n as n, tot_pv_aule_p_i1_sum as total from pv_rollup
       where level = 'hour' and start = '2025-04-01T10:00:00Z'`,
      )
      expect(hour.rows).toEqual([{ n: 1, total: 10 }])
    } finally {
      await own.close()
    }
  })

  it('rollups:refresh brings the rollups up to rows written by plain SQL (real process)', async () => {
    const fresh = await testDatabase()
    try {
      await fresh.pool.query(
        `insert into water_15m (time_15m, tot_sede_centrale) values ('2025-05-01T10:00:00Z', 3), ('2025-05-01T10:15:00Z', 4)`,
      )
      const hour = () =>
        fresh.pool.query(`select quarters, tot_sede_centrale_n as n, tot_sede_centrale_sum as total from water_rollup
          where level = 'hour' and start = '2025-05-01T10:00:00Z'`)
      expect((await hour()).rows).toEqual([])
      expect((await cli(['rollups:refresh', '--from', '2025-05-01'], fresh.url)).code).toBe(2)
      const refreshed = await cli(['rollups:refresh', '--from', '2025-05-01', '--to', '2025-05-02'], fresh.url)
      expect(refreshed.code).toBe(0)
      expect(JSON.parse(refreshed.stdout).refreshed).toContain('water_15m')
      expect((await hour()).rows).toEqual([{ quarters: 2, n: 2, total: 7 }])
      // the day of the service's zone too
      const day = await fresh.pool.query(
        `select tot_sede_centrale_sum as total from water_rollup where level = 'day' and start = '2025-04-30T22:00:00Z'`,
      )
      expect(day.rows).toEqual([{ total: 7 }])
    } finally {
      await fresh.close()
    }
  })

  it('a bad file loads nothing and the error names file, line and column (real process)', async () => {
    const good = write('pv-good.csv', 'time_15m,tot_pv\n2025-06-01 10:00:00,100\n')
    const bad = write(
      'pv-bad.csv',
      'time_15m,tot_pv\n2025-06-01 10:15:00,101\n2025-06-01 10:30:00,abc\n2025-06-01 10:40:00,5\n',
    )
    const result = await cli(['import', good, bad], fresh.url)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`${bad}:3: column tot_pv: "abc" is not a number`)
    expect(result.stderr).toContain(`${bad}:4: column time_15m: 2025-06-01 10:40:00 is not on a quarter hour`)
    const rows = await fresh.db.selectFrom('pv_15m').selectAll().execute()
    expect(rows).toEqual([])
  })

  it('rejects unknown meters, tags, columns and malformed lines', async () => {
    const cases: Array<[string, string]> = [
      ['time_15m,meter_id,avg_value\n2025-06-01 10:00:00,6,1\n', ':2: column meter_id: meter 6 does not exist'],
      [
        'time_15m,meter_id,avg_value,tag\n2025-06-01 10:00:00,5,1,great\n',
        ':2: column tag: "great" is not a data-quality tag',
      ],
      [
        'time_15m,meter_id,min_value,max_value\n2025-06-01 10:00:00,5,3,1\n',
        ':2: column min_value: min_value is above max_value',
      ],
      ['time_15m,nonsense\n2025-06-01 10:00:00,1\n', ':1: column header: no group has all of the columns nonsense'],
      ['time_15m,tot_pv\n2025-06-01 10:00:00,1,2\n', ':2: column line: expected 2 fields, found 3'],
      ['time_15m,tot_pv\n2025-13-01 10:00:00,1\n', ':2: column time_15m: "2025-13-01 10:00:00" is not a datetime'],
      [
        'time_15m,tot_pv\n2025-06-01 10:00:00,1\n2025-06-01 10:00:00,2\n',
        ':3: column time_15m: 2025-06-01 10:00:00 appears twice in the file',
      ],
    ]
    for (const [text, message] of cases) {
      const path = write('case.csv', text)
      await expect(importFiles(fresh.pool, [path])).rejects.toThrow(`${path}${message}`)
    }
    expect(await fresh.db.selectFrom('pv_15m').selectAll().execute()).toEqual([])
  })

  it('reads back what the API writes: CSV and TXT exports import to the same rows', async () => {
    const source = await startHarness({ data: seeded({ from: '2025-03-29', to: '2025-04-01', seed: '3' }) })
    try {
      const key = await source.key(['*'], 'x')
      const q = 'start_datetime=2025-03-29&end_datetime=2025-03-31T23:45:00Z'
      const csv = await source.app.inject({ url: `/data/weather?${q}&data_format=csv`, headers: { 'x-api-key': key } })
      const txt = await source.app.inject({ url: `/data/pv?${q}&data_format=txt`, headers: { 'x-api-key': key } })
      const target = await testDatabase()
      try {
        const result = await importFiles(target.pool, [write('weather.csv', csv.body), write('pv.txt', txt.body)])
        expect(result.imported.map((r) => r.layout)).toEqual(['weather (wide)', 'pv (wide)'])
        for (const table of ['weather_15m', 'pv_15m'] as const) {
          const columns = GROUP_COLUMNS[table === 'pv_15m' ? 'pv' : 'weather']
          const digest = async (d: TestDatabase<EnergyDatabase>) =>
            (
              await sql<{
                h: string
              }>`select md5(string_agg(${sql.raw(`time_15m::text || ${columns.map((c) => `coalesce(${c}::text, '-')`).join(" || ',' || ")}`)}, ';' order by time_15m)) as h from ${sql.table(table)}`.execute(
                d.db,
              )
            ).rows[0]?.h
          expect(await digest(target)).toBe(await digest(source.database))
        }
      } finally {
        await target.close()
      }
    } finally {
      await source.close()
    }
  })
})
