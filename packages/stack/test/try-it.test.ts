/** The demo details belong to the databases they were made on (demo.json keyed by database). */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { StackConfig } from '../src/services.ts'
import { demoFile, readDemoDetails, tryItBlock, writeDemoDetails } from '../src/try-it.ts'

const embeddedDetails = {
  oauth: {
    username: 'demo',
    password: 'embedded-pw',
    client_id: 'c-embedded',
    redirect_uri: 'http://127.0.0.1:8765/callback',
  },
  energy: { key: 'edk_embedded' },
}
const serverDetails = {
  oauth: {
    username: 'demo',
    password: 'server-pw',
    client_id: 'c-server',
    redirect_uri: 'http://127.0.0.1:8765/callback',
  },
  energy: { key: 'edk_server' },
}

describe('demo details, per database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'demo-details-'))
  const embedded: StackConfig = { HOST: '127.0.0.1', DATA_DIR: dir }
  const onServer: StackConfig = {
    HOST: '127.0.0.1',
    DATA_DIR: dir,
    OAUTH_DATABASE_URL: 'postgres://postgres:secret@127.0.0.1:5432/oauth',
    ENERGY_DATABASE_URL: 'postgres://postgres:secret@127.0.0.1:5432/energy',
  }

  it('a start on another database neither shows nor overwrites the details of the first', () => {
    writeDemoDetails(embedded, embeddedDetails)
    expect(readDemoDetails(onServer)).toEqual({})
    writeDemoDetails(onServer, serverDetails)
    expect(readDemoDetails(embedded)).toEqual(embeddedDetails)
    expect(readDemoDetails(onServer)).toEqual(serverDetails)
    // one service moved to a server: each keeps its own database's details
    const mixed: StackConfig = { ...embedded, ENERGY_DATABASE_URL: onServer.ENERGY_DATABASE_URL }
    expect(readDemoDetails(mixed)).toEqual({ oauth: embeddedDetails.oauth, energy: serverDetails.energy })
    // never a server's password in the file
    expect(readFileSync(demoFile(embedded), 'utf8')).not.toContain('secret')
  })

  it('details of a file that does not say whose they are are not shown', () => {
    const old = mkdtempSync(join(tmpdir(), 'demo-details-old-'))
    writeFileSync(join(old, 'demo.json'), JSON.stringify(embeddedDetails))
    expect(readDemoDetails({ HOST: '127.0.0.1', DATA_DIR: old })).toEqual({})
  })

  it('the Try it block shows the addresses it is given', () => {
    const block = tryItBlock(embedded, embeddedDetails, {
      oauth: 'http://127.0.0.1:3710',
      energy: 'http://127.0.0.1:8710',
    })
    expect(block).toContain('http://127.0.0.1:3710/users/sign_in   as demo / embedded-pw')
    expect(block).toContain("curl -H 'x-api-key: edk_embedded' 'http://127.0.0.1:8710/data/pv?aggregation=1%20h'")
  })

  it('the Live line names the topics and the simulated dataloggers only when they run', () => {
    const live = { mqtt: 'mqtt://127.0.0.1:1883', ingest: 'http://127.0.0.1:8300' }
    const liveLine = (config: StackConfig) =>
      tryItBlock(config, embeddedDetails, live)
        .split('\n')
        .find((l) => l.trim().startsWith('Live'))
    expect(liveLine(embedded)).toContain('campus/<datalogger>/senml (simulated dataloggers); POST')
    expect(liveLine({ ...embedded, SIMULATE_DATALOGGERS: false })).toBe(
      '  Live            mqtt://127.0.0.1:1883 on campus/<datalogger>/senml; POST http://127.0.0.1:8300/ingest/senml',
    )
    expect(liveLine({ ...embedded, MQTT_TOPIC_ROOT: 'site2' })).toContain(' on site2/<datalogger>/senml (simulated')
  })

  it('the Live line points at the gateway key shown under it, which may write; the API key reads', () => {
    const details = { ...embeddedDetails, energy: { key: 'edk_reader', gatewayKey: 'edk_gateway' } }
    const urls = { energy: 'http://127.0.0.1:8000', mqtt: 'mqtt://127.0.0.1:1883', ingest: 'http://127.0.0.1:8300' }
    const lines = tryItBlock(embedded, details, urls).split('\n').slice(-5, -1)
    expect(lines).toEqual([
      '  API key         edk_reader (reads every endpoint of the data API)',
      "  Try             curl -H 'x-api-key: edk_reader' 'http://127.0.0.1:8000/data/pv?aggregation=1%20h'",
      '  Live            mqtt://127.0.0.1:1883 on campus/<datalogger>/senml (simulated dataloggers); POST http://127.0.0.1:8300/ingest/senml with the gateway key',
      '  Gateway key     edk_gateway (writes: POST /ingest/senml only)',
    ])
  })
})
