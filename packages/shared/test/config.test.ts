import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import Type from 'typebox'
import { describe, expect, it } from 'vitest'
import {
  AddressList,
  CommonConfig,
  ConfigError,
  DatabaseUrl,
  loadConfig,
  Port,
  parseAddressList,
} from '../src/config.ts'

const Schema = Type.Object({ ...CommonConfig, ENERGY_PORT: Port(8000), ENERGY_DATABASE_URL: DatabaseUrl() })

describe('configuration loader', () => {
  it('applies defaults and converts strings', () => {
    const config = loadConfig(Schema, { ENERGY_PORT: '8123', MIGRATE_ON_START: 'true' })
    expect(config).toMatchObject({ ENERGY_PORT: 8123, HOST: '127.0.0.1', LOG_LEVEL: 'info', MIGRATE_ON_START: true })
    expect(config.ENERGY_DATABASE_URL).toBeUndefined()
  })

  it('treats an empty value as unset', () => {
    expect(loadConfig(Schema, { ENERGY_PORT: '' }).ENERGY_PORT).toBe(8000)
  })

  it.each([
    [{ ENERGY_PORT: 'abc' }, 'Invalid configuration: ENERGY_PORT must be an integer from 0 to 65535 (got "abc")'],
    [{ ENERGY_PORT: '70000' }, 'Invalid configuration: ENERGY_PORT must be an integer from 0 to 65535 (got "70000")'],
    [
      { LOG_LEVEL: 'loud' },
      'Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
    ],
    [
      { ENERGY_DATABASE_URL: 'mysql://x' },
      'Invalid configuration: ENERGY_DATABASE_URL must be a string matching ^postgres(ql)?:// (got "mysql://x")',
    ],
  ])('rejects %o with one line naming the variable', (env, message) => {
    expect(() => loadConfig(Schema, env)).toThrow(new ConfigError(message))
  })

  it('reads a list of addresses and CIDR ranges, and refuses anything else by name', () => {
    const Proxies = Type.Object({ PROXIES: AddressList('Proxies') })
    const config = loadConfig(Proxies, { PROXIES: '10.0.0.0/8, 192.168.1.7 ::1,fd00::/8' })
    expect(parseAddressList(config.PROXIES)).toEqual(['10.0.0.0/8', '192.168.1.7', '::1', 'fd00::/8'])
    expect(parseAddressList(loadConfig(Proxies, {}).PROXIES)).toEqual([])
    for (const bad of ['proxy.example', '10.0.0.0/33', '::1/129', '10.0.0.1/8/8', '300.1.1.1', '10.0.0.0/']) {
      expect(() => loadConfig(Proxies, { PROXIES: bad }), bad).toThrow(
        new ConfigError(
          `Invalid configuration: PROXIES must be a list of IP addresses or CIDR ranges separated by commas (e.g. 10.0.0.0/8, ::1) (got ${JSON.stringify(bad)})`,
        ),
      )
    }
  })

  it('a service given a broken port exits non-zero with one clear line', () => {
    const server = fileURLToPath(new URL('../../energy-data/src/server.ts', import.meta.url))
    const result = spawnSync(process.execPath, ['--experimental-strip-types', server], {
      env: { ...process.env, ENERGY_PORT: 'abc' },
      encoding: 'utf8',
    })
    expect(result.status).toBe(1)
    expect(result.stderr.trim()).toBe(
      'Invalid configuration: ENERGY_PORT must be an integer from 0 to 65535 (got "abc")',
    )
  })
})
