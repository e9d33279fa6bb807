/**
 * The command lines of virtual meters, tariffs and emission factors: JSON out, each refusal exact,
 * nothing written by a refused command; a virtual meter's rows refused by `import`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestDatabase } from '@campus/shared/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { emissionsImport, tariffsImport } from '../src/commands/rates.ts'
import { virtualCreate, virtualDelete } from '../src/commands/virtual-meters.ts'
import type { EnergyDatabase } from '../src/db/schema.ts'
import { importFiles } from '../src/import/import-csv.ts'
import { priced } from './fixtures/priced.ts'
import { energyCli, testDatabase } from './harness.ts'

const dir = mkdtempSync(join(tmpdir(), 'virtual-rates-'))
const file = (name: string, text: string) => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

let database: TestDatabase<EnergyDatabase>
const cli = (args: string[]) => energyCli(database.url, args)
const count = async (table: string) =>
  Number((await database.pool.query<{ n: string }>(`select count(*) as n from ${table}`)).rows[0]?.n)

beforeAll(async () => {
  database = await testDatabase(priced)
})
afterAll(async () => database?.close())

describe('virtual:create, virtual:list, virtual:delete (real processes)', () => {
  it('creates a virtual meter from its formula, prints it as JSON, lists it and deletes it with its rows', async () => {
    const created = await cli([
      'virtual:create',
      '--id',
      '2001',
      '--name',
      'Acqua non misurata',
      '--formula',
      '920-921 -922',
    ])
    expect(created.code, created.stderr).toBe(0)
    expect(JSON.parse(created.stdout)).toMatchObject({
      id: 2001,
      name: 'Acqua non misurata',
      formula: '920 - 921 - 922',
      kind: 'volume',
      unit_id: 'unit:M3',
      unit: 'm³',
      inputs: [
        { meter_id: 920, coefficient: 1 },
        { meter_id: 921, coefficient: -1 },
        { meter_id: 922, coefficient: -1 },
      ],
      // the fixture's first half: 5 days of quarter hours
      quarter_hours: 480,
      first_quarter_hour: '2025-10-18T00:00:00.000Z',
      last_quarter_hour: '2025-10-22T23:45:00.000Z',
    })
    const listed = await cli(['virtual:list'])
    expect(JSON.parse(listed.stdout).virtual_meters.map((v: { id: number }) => v.id)).toEqual([2001])
    const deleted = await cli(['virtual:delete', '--id', '2001'])
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(JSON.parse(deleted.stdout).deleted.id).toBe(2001)
    const left = await database.pool.query(
      'select (select count(*)::int from data_15m where meter_id = 2001) as rows, (select count(*)::int from data_rollup where meter_id = 2001) as rollups, (select count(*)::int from meters where id = 2001) as meters',
    )
    expect(left.rows[0]).toEqual({ rows: 0, rollups: 0, meters: 0 })
  })

  it('refuses what is not a virtual meter, each with its reason, and writes nothing', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [
        { id: '2002', name: 'x', formula: '860 - 900' },
        'the inputs of a virtual meter are of one kind and unit; these are not: 860 energy (unit:KiloW-HR), 900 power (unit:KiloW)',
      ],
      [{ id: '2002', name: 'x', formula: '860 - 999' }, 'meter 999 does not exist'],
      [{ id: '860', name: 'x', formula: '870 + 880' }, 'meter 860 is a meter of the estate: choose another --id'],
      [
        { id: '2002', name: 'x', formula: '860 860' },
        '--formula: cannot read "860": terms are [coefficient *] meter id, joined by + or -',
      ],
      [{ id: '2002', name: 'x', formula: '860 + 860' }, '--formula: meter 860 appears twice'],
      [
        { id: '2002', name: 'x', formula: '0*860 + 870' },
        '--formula: the coefficient of meter 860 must be a non-zero number',
      ],
      [{ id: '2002', name: 'x', formula: '2002 + 870' }, 'meter 2002 cannot be an input of itself'],
    ]
    for (const [input, message] of cases) {
      await expect(virtualCreate(database.pool, input), message).rejects.toThrow(message)
    }
    await virtualCreate(database.pool, { id: '2003', name: 'Resto', formula: '860 - 870' })
    await expect(virtualCreate(database.pool, { id: '2004', name: 'x', formula: '2003 + 870' })).rejects.toThrow(
      'meter 2003 is virtual: the inputs of a virtual meter are real meters',
    )
    await expect(virtualCreate(database.pool, { id: '2003', name: 'x', formula: '870 + 880' })).rejects.toThrow(
      'meter 2003 exists already: choose another --id',
    )
    await expect(virtualDelete(database.pool, { id: '860' })).rejects.toThrow('meter 860 is not a virtual meter')
    expect(await count('virtual_meters')).toBe(1)
    const usage = await cli(['virtual:create', '--id', '2005', '--formula', '860'])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain('virtual:create needs --name TEXT')
  })

  it('import refuses the rows of a virtual meter: its quarter hours are computed', async () => {
    const path = file('virtual.csv', 'time_15m,meter_id,sum_value\n2025-10-18 00:00:00,2003,1\n')
    await expect(importFiles(database.pool, [path])).rejects.toThrow(
      `${path}:2: column meter_id: meter 2003 is virtual: its quarter hours are computed from its inputs'`,
    )
  })
})

const HEADER = 'commodity,valid_from,valid_to,days,from_time,to_time,price,currency'

describe('tariffs:import and emissions:import', () => {
  it('prints the version it made (real process), and lists it', async () => {
    const path = file('tariff.csv', `${HEADER}\nelectricity,2025-01-01,2026-01-01,all,00:00,24:00,0.2,EUR\n`)
    const imported = await cli(['tariffs:import', path])
    expect(imported.code, imported.stderr).toBe(0)
    expect(JSON.parse(imported.stdout)).toEqual({
      version: 1,
      kind: 'tariff',
      zone: 'Europe/Rome',
      currency: 'EUR',
      rows: 1,
      spans: { electricity: { from: '2024-12-31T23:00:00.000Z', to: '2025-12-31T23:00:00.000Z' } },
    })
    const listed = JSON.parse((await cli(['tariffs:list'])).stdout)
    expect(listed.versions).toEqual([
      { version: 1, file: 'tariff.csv', zone: 'Europe/Rome', currency: 'EUR', imported_at: expect.any(String) },
    ])
  })

  it('refuses overlapping bands, uncovered hours and days, gaps of validity and mixed currencies, naming the lines', async () => {
    const cases: Array<[string, string[]]> = [
      [
        `${HEADER}\nelectricity,2025-01-01,2025-07-01,mon-fri,00:00,08:00,0.18,EUR\nelectricity,2025-01-01,2025-07-01,mon-fri,07:00,24:00,0.27,EUR\nelectricity,2025-01-01,2025-07-01,sat,00:00,24:00,0.1,EUR\n`,
        [
          'electricity: lines 2, 3 overlap on mon, tue, wed, thu, fri 07:00-08:00 from 2025-01-01 to 2025-07-01',
          'electricity: no band covers sun 00:00-24:00 from 2025-01-01 to 2025-07-01',
        ],
      ],
      [
        `${HEADER}\nwater,2025-01-01,2025-03-01,all,00:00,24:00,2,EUR\nwater,2025-04-01,2025-05-01,all,00:00,12:00,2,EUR\nwater,2025-04-01,2025-05-01,all,12:15,24:00,2,EUR\n`,
        [
          'water: no band from 2025-03-01 to 2025-04-01 (a gap in the validity of lines 2, 3, 4)',
          'water: no band covers sun, mon, tue, wed, thu, fri, sat 12:00-12:15 from 2025-04-01 to 2025-05-01 (the bands of those days: lines 3, 4)',
        ],
      ],
      [
        `${HEADER}\nwater,2025-01-01,2025-03-01,all,00:00,24:00,2,EUR\nwater,2025-03-01,2025-04-01,all,00:00,24:00,2,USD\n`,
        ['column currency: one currency per import, this file mixes EUR on lines 2; USD on lines 3'],
      ],
      [
        `${HEADER}\ngas,2025-01-01,2025-03-01,weekdays,00:10,25:00,x,EUR\n`,
        [
          ':2: column days: "weekdays" is not one of mon-fri, sat, sun, all',
          ':2: column commodity: "gas" is not one of electricity, water',
          ':2: column from_time: 00:10 is not on a quarter hour (the bands price whole quarter hours)',
          ':2: column to_time: "25:00" is not a local time hh:mm (00:00 to 24:00)',
          ':2: column price: "x" is not a number',
        ],
      ],
      [
        'commodity,from,to,price\n',
        [
          'column header: expected commodity,valid_from,valid_to,days,from_time,to_time,price,currency, found commodity,from,to,price',
        ],
      ],
    ]
    for (const [[text, messages], i] of cases.map((c, i) => [c, i] as const)) {
      const path = file(`bad-${i}.csv`, text)
      const error = await tariffsImport(database.pool, path, 'Europe/Rome').then(
        () => undefined,
        (e: Error) => e.message,
      )
      expect(error, text).toMatch(/^nothing imported:/)
      for (const message of messages) expect(error, text).toContain(message)
    }
    const other = file('usd.csv', `${HEADER}\nwater,2025-01-01,2026-01-01,all,00:00,24:00,2,USD\n`)
    await expect(tariffsImport(database.pool, other, 'Europe/Rome')).rejects.toThrow(
      'nothing imported: the tariffs so far are in EUR, this file in USD: one currency, so costs add up',
    )
    expect(await count('rate_versions')).toBe(1)
  })

  it('refuses an hourly series with an hour missing or twice, naming the lines', async () => {
    const path = file(
      'hours.csv',
      'commodity,time,kg_co2e_per_unit\nelectricity,2025-01-01 00:00:00,0.2\nelectricity,2025-01-01 00:30:00,0.2\nelectricity,2025-01-01 03:00:00,0.2\n',
    )
    await expect(emissionsImport(database.pool, path, 'Europe/Rome')).rejects.toThrow(
      `nothing imported:\n${path}:3: column time: electricity: overlaps the hour of line 2\n${path}:4: column time: electricity: an hour is missing after line 3`,
    )
    expect(await count('rate_hours')).toBe(0)
  })
})
