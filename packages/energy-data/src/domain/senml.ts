/**
 * SenML packs (RFC 8428, JSON) resolved into the samples the campus's dataloggers report: base
 * fields applied (`bn` + `n`, `bt` + `t`, `bu`, `bv` + `v`, `bs` + `s`), relative times made
 * absolute, names read as `urn:campus:meter:<id>`. A record that cannot be a sample is refused
 * with its reason and the rest of the pack stands; a payload that is not a pack at all is refused
 * whole. No npm package keeps RFC 8428's resolution rules (the ones there are unmaintained
 * encoders), so this is the service's own.
 */

/** `value`: a reading (`v`, an amount meter's increment); `register`: a cumulative register reading (`s`). */
export type Reading = 'value' | 'register'

/** One record, resolved: a numeric value (`v`) or a cumulative sum (`s`, a meter's register). */
export interface SenmlSample {
  /** Position of the record in the pack, from 0. */
  index: number
  meterId: number
  /** Epoch microseconds, whole (PostgreSQL keeps microseconds; see `toMicroseconds`). */
  timeUs: number
  /** SenML unit symbol as sent (`bu` or `u`), or undefined. */
  unit: string | undefined
  reading: Reading
  value: number
}

export interface SenmlRefusal {
  index: number
  /** `bad_record`: not valid SenML; `not_numeric`: a valid record of another type of value; `out_of_range`. */
  code: 'bad_record' | 'not_numeric' | 'out_of_range'
  reason: string
}

export type SenmlPack = { ok: true; samples: SenmlSample[]; refused: SenmlRefusal[] } | { ok: false; reason: string }

/** RFC 8428 section 4.5.1: the characters a resolved name may hold. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9\-:./_]*$/
const METER_NAME = /^urn:campus:meter:([1-9][0-9]{0,9})$/
/** RFC 8428 section 4.5.3: a resolved time below 2**28 seconds is relative to now. */
const RELATIVE_LIMIT = 2 ** 28
/** Labels of RFC 8428 section 4.1; a label ending in `_` must be understood, or the pack refused. */
const KNOWN = new Set(['bn', 'bt', 'bu', 'bv', 'bs', 'bver', 'n', 'u', 'v', 'vs', 'vb', 'vd', 's', 't', 'ut'])
const HIGHEST_VERSION = 10

/** The base of every meter's SenML name. */
export const METER_NAME_BASE = 'urn:campus:meter:'
export const meterName = (meterId: number): string => `${METER_NAME_BASE}${meterId}`

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x)

/**
 * Resolves a SenML JSON pack (the parsed JSON). `nowMs` stands for "now" in relative times.
 * Refused records keep their index, so a quarantine can show the raw record and why.
 */
export function resolvePack(pack: unknown, nowMs: number): SenmlPack {
  if (!Array.isArray(pack)) return { ok: false, reason: 'not a SenML pack: a JSON array of records is expected' }
  if (pack.length === 0) return { ok: false, reason: 'not a SenML pack: the array holds no record' }
  for (let index = 0; index < pack.length; index++) {
    const record: unknown = pack[index]
    if (!isObject(record)) return { ok: false, reason: `not a SenML pack: record ${index} is not an object` }
    const unknown = mustUnderstand(record)
    if (unknown) return { ok: false, reason: shortened(`record ${index} has the must-understand label ${unknown}`) }
    if (record.bver !== undefined && (typeof record.bver !== 'number' || record.bver > HIGHEST_VERSION)) {
      return { ok: false, reason: shortened(`record ${index}: SenML version ${String(record.bver)} is not supported`) }
    }
  }
  const samples: SenmlSample[] = []
  const refused: SenmlRefusal[] = []
  const base = { bn: '', bt: 0, bu: undefined as string | undefined, bv: 0, bs: 0 }
  // a pack names few meters, record after record: each name is read once, by its base name and
  // name (no joined string per record)
  const meterOfName = new Map<string, Map<string, number | string>>()
  let names = 0
  const refuse = (index: number, reason: string, code: SenmlRefusal['code'] = 'bad_record') =>
    refused.push({ index, code, reason: shortened(reason) })
  for (let index = 0; index < pack.length; index++) {
    const raw = pack[index] as Record<string, unknown>
    // base fields apply to this record and every later one, until set again (section 4.5)
    const problem = readBase(raw, base)
    if (problem) {
      refuse(index, problem)
      continue
    }
    if (raw.n !== undefined && typeof raw.n !== 'string') {
      refuse(index, 'n is not a string')
      continue
    }
    const n = (raw.n as string | undefined) ?? ''
    let ofBase = meterOfName.get(base.bn)
    let meterId = ofBase?.get(n)
    if (meterId === undefined) {
      meterId = meterOfNameOrWhyNot(base.bn + n)
      if (names < MAX_NAMES_KEPT) {
        if (!ofBase) {
          ofBase = new Map()
          meterOfName.set(base.bn, ofBase)
        }
        ofBase.set(n, meterId)
        names++
      }
    }
    if (typeof meterId === 'string') {
      refuse(index, meterId)
      continue
    }
    const unit = raw.u === undefined ? base.bu : raw.u
    if (unit !== undefined && typeof unit !== 'string') {
      refuse(index, 'u is not a string')
      continue
    }
    if (raw.t !== undefined && !finite(raw.t)) {
      refuse(index, 't is not a finite number')
      continue
    }
    const seconds = base.bt + ((raw.t as number | undefined) ?? 0)
    const timeUs = toMicroseconds(seconds < RELATIVE_LIMIT ? nowMs / 1000 + seconds : seconds)
    if (raw.vs !== undefined || raw.vb !== undefined || raw.vd !== undefined) {
      refuse(index, 'a string, boolean or data value: measurements are numbers (v or s)', 'not_numeric')
      continue
    }
    const hasValue = raw.v !== undefined
    const hasSum = raw.s !== undefined
    if (hasValue && hasSum) {
      refuse(index, 'both v and s: a record carries one reading, a value or the register (sum)')
      continue
    }
    if (!hasValue && !hasSum) {
      refuse(index, 'no value: v (a reading) or s (a cumulative register) is expected')
      continue
    }
    const field = hasValue ? raw.v : raw.s
    if (!finite(field)) {
      refuse(index, `${hasValue ? 'v' : 's'} is not a number`)
      continue
    }
    const value = (hasValue ? base.bv : base.bs) + (field as number)
    if (!Number.isFinite(value)) {
      refuse(index, 'the resolved value is not finite', 'out_of_range')
      continue
    }
    if (!Number.isSafeInteger(timeUs)) {
      refuse(index, `t resolves to ${seconds} s, outside the calendar`)
      continue
    }
    samples.push({ index, meterId, timeUs, unit, reading: hasValue ? 'value' : 'register', value })
  }
  return { ok: true, samples, refused }
}

/** Names read per pack, at most (a pack of distinct made-up names reads each of the rest anew). */
const MAX_NAMES_KEPT = 1024

/** The meter a resolved name names, or why it names none. */
function meterOfNameOrWhyNot(name: string): number | string {
  if (!NAME.test(name))
    return name ? `name ${JSON.stringify(name)} is not a valid SenML name` : 'the record has no name'
  const meter = METER_NAME.exec(name)
  if (!meter) return `name ${JSON.stringify(name)} is not urn:campus:meter:<meter id>`
  return Number(meter[1])
}

/** The first label ending in `_` that this service does not understand (section 4.1), if any. */
function mustUnderstand(record: Record<string, unknown>): string | undefined {
  for (const label in record) if (label.endsWith('_') && !KNOWN.has(label)) return label
  return undefined
}

const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x)

const QUARTER_US = 900_000_000

/**
 * SenML seconds as whole microseconds: the nearest one, but never the first of the next quarter
 * hour (a sample at 09:14:59.9999996 stays in the quarter hour it was taken in).
 */
export function toMicroseconds(seconds: number): number {
  const exact = seconds * 1e6
  const us = Math.round(exact)
  return us % QUARTER_US === 0 && exact < us ? us - 1 : us
}

/** Reasons quote what was sent: a bounded part of it, whatever its size, and never a NUL (text refuses it). */
const REASON_CHARS = 200
export const shortened = (reason: string): string => {
  const text = reason.replaceAll('\u0000', '\uFFFD')
  return text.length > REASON_CHARS ? `${text.slice(0, REASON_CHARS - 1)}…` : text
}

const BASE_NUMBERS = ['bt', 'bv', 'bs'] as const

/** Applies the record's base fields to `base`; a reason when one of them is malformed. */
function readBase(
  raw: Record<string, unknown>,
  base: { bn: string; bt: number; bu: string | undefined; bv: number; bs: number },
): string | undefined {
  if (raw.bn !== undefined) {
    if (typeof raw.bn !== 'string') return 'bn is not a string'
    base.bn = raw.bn
  }
  if (raw.bu !== undefined) {
    if (typeof raw.bu !== 'string') return 'bu is not a string'
    base.bu = raw.bu
  }
  for (const label of BASE_NUMBERS) {
    if (raw[label] === undefined) continue
    if (!finite(raw[label])) return `${label} is not a finite number`
    base[label] = raw[label]
  }
  return undefined
}
