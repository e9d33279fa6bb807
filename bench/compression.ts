/**
 * Compression of the data API's exports (gzip and brotli by Accept-Encoding), on PostgreSQL.
 *
 *   node --experimental-strip-types bench/compression.ts [postgres://admin-url]
 *
 * Seeds ten years of one group at 15 minutes (as bench/energy.ts does) and prints:
 *  1. ten years as CSV and one year as JSON: bytes and time, plain vs gzip vs brotli, each
 *     downloaded whole by a client that counts the bytes on the wire;
 *  2. peak RSS of a fresh service process streaming one year and ten years, plain and
 *     compressed (memory must stay flat: the same peak for both spans, the compressor working
 *     on the stream piece by piece);
 *  3. why the levels: the compressor alone on 8 MB of that CSV at the levels the service uses
 *     (brotli 4, gzip 6) and at the highest (brotli 11, gzip 9), in MB/s and ratio.
 */

import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import type { EnergyDatabase } from '../packages/energy-data/src/db/schema.ts'
import { createApiKey } from '../packages/energy-data/src/repositories/api-keys.ts'
import { energyService } from '../packages/energy-data/src/service.ts'
import { energyNodeFlags, seedTenYearsOfWater, startEnergyService, TEN_YEARS } from './energy-support.ts'
import { BENCH_SERVER_URL, benchDatabase } from './support.ts'

const ADMIN_URL = process.argv[2] ?? BENCH_SERVER_URL
const NODE_FLAGS = energyNodeFlags(process.env.BENCH_NODE_FLAGS)
const YEAR = { from: '2024-01-01T00:00:00Z', to: '2024-12-31T23:45:00Z' }
const ENCODINGS = ['identity', 'gzip', 'br'] as const

const line = (text: string) => process.stdout.write(`${text}\n`)
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
const pad = (text: string, width: number) => text.padEnd(width)

/** Bytes on the wire (not decoded) and the time to the last one. */
function download(target: string, key: string, encoding: string): Promise<{ bytes: number; ms: number; body: Buffer }> {
  const start = performance.now()
  return new Promise((resolve, reject) => {
    const req = request(target, { headers: { 'x-api-key': key, 'accept-encoding': encoding } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`${target}: ${res.statusCode}`))
      const sent = res.headers['content-encoding'] ?? 'identity'
      if (sent !== encoding) reject(new Error(`asked for ${encoding}, got ${sent}`))
      const kept: Buffer[] = []
      let bytes = 0
      let keptBytes = 0
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length
        if (keptBytes < 8 * 1024 * 1024) {
          kept.push(chunk)
          keptBytes += chunk.length
        }
      })
      res.on('end', () => resolve({ bytes, ms: performance.now() - start, body: Buffer.concat(kept) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024
}

function compressor(name: string, compress: (input: Buffer) => Buffer, sample: Buffer): string {
  const start = performance.now()
  const out = compress(sample)
  const seconds = (performance.now() - start) / 1000
  return `   ${pad(name, 10)} ${(sample.length / 1024 / 1024 / seconds).toFixed(0).padStart(5)} MB/s   ratio ${(sample.length / out.length).toFixed(1)}`
}

async function main() {
  const database = await benchDatabase<EnergyDatabase>('compressbench', energyService.migrationsDir, ADMIN_URL)
  try {
    await seedTenYearsOfWater(database.pool)
    await database.pool.query('analyze')
    const { key } = await createApiKey(database.db, { name: 'bench', endpoints: ['*'] })
    const tenYears = `/data/water?start_datetime=${TEN_YEARS.from}&end_datetime=${TEN_YEARS.to}&data_format=csv`
    const year = `/data/water?start_datetime=${YEAR.from}&end_datetime=${YEAR.to}`

    // 2 first: each export on a fresh process, so the peak is that export's alone; one year
    // beside ten: flat memory means the same peak for both
    line('2. /data/water as CSV, one year and ten years, each on a fresh service process')
    let sample: Buffer = Buffer.alloc(0)
    const wire: Record<string, { bytes: number; ms: number }> = {}
    for (const encoding of ENCODINGS) {
      for (const [span, path] of [
        ['1 year', `${year}&data_format=csv`],
        ['10 years', tenYears],
      ] as const) {
        const service = await startEnergyService(database.url, NODE_FLAGS)
        const pid = service.child.pid as number
        const atStart = peakRss(pid)
        try {
          const result = await download(service.base + path, key, encoding)
          if (span === '10 years') wire[encoding] = result
          if (span === '10 years' && encoding === 'identity') sample = result.body
          line(
            `   ${pad(encoding, 9)} ${pad(span, 9)} ${mb(result.bytes).padStart(8)} in ${result.ms.toFixed(0).padStart(5)} ms   ` +
              `peak RSS ${mb(atStart)} after start -> ${mb(peakRss(pid))}`,
          )
        } finally {
          service.child.kill('SIGTERM')
        }
      }
    }

    line('')
    line('1. bytes and time, plain vs compressed (one process, second of two runs)')
    const service = await startEnergyService(database.url, NODE_FLAGS)
    try {
      for (const [name, path] of [
        ['ten years CSV', tenYears],
        ['a year JSON', year],
      ] as const) {
        for (const encoding of ENCODINGS) {
          await download(service.base + path, key, encoding)
          const result = await download(service.base + path, key, encoding)
          const plain = name === 'ten years CSV' ? wire.identity?.bytes : undefined
          line(
            `   ${pad(name, 14)} ${pad(encoding, 9)} ${mb(result.bytes).padStart(8)} in ${result.ms.toFixed(0).padStart(5)} ms` +
              (plain && encoding !== 'identity' ? `   (${((100 * result.bytes) / plain).toFixed(1)} % of plain)` : ''),
          )
        }
      }
    } finally {
      service.child.kill('SIGTERM')
    }

    line('')
    line(`3. the compressor alone on ${mb(sample.length)} of that CSV (service levels first)`)
    const brotli = (quality: number) => (input: Buffer) =>
      brotliCompressSync(input, { params: { [constants.BROTLI_PARAM_QUALITY]: quality } })
    line(compressor('brotli 4', brotli(4), sample))
    line(compressor('gzip 6', (input) => gzipSync(input, { level: 6 }), sample))
    line(compressor('brotli 11', brotli(11), sample))
    line(compressor('gzip 9', (input) => gzipSync(input, { level: 9 }), sample))
  } finally {
    await database.close()
  }
}

await main()
