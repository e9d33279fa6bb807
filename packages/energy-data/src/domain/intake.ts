/**
 * What a live message (one SenML pack, from MQTT or HTTP) gives: the samples to take, in each
 * meter's catalogue unit, and what goes to the quarantine with its reason. Pure, in two steps: a
 * message is read as it arrives (`resolveMessage`: the pack, no database), then judged against the
 * facts of the meters it names (`judgeMessage`: dates, datalogger, live start), read by the caller
 * in the transaction that writes it.
 */
import { KINDS, type KindName, REFUSED_MAGNITUDE, senmlConversion, type UnitId } from '../catalogue/quantities.ts'
import { type Reading, resolvePack, type SenmlSample, shortened } from './senml.ts'

export interface MeterFacts {
  id: number
  datalogger: string
  kind: KindName
  unit: UnitId
  /** Epoch milliseconds, or null when open. */
  fromMs: number | null
  toMs: number | null
  /** Live samples before it are refused: a seed or an import wrote the quarter hours up to it. */
  liveFromMs: number | null
}

export interface LiveMessage {
  /** `mqtt:campus/DL-X/senml`, `http:<credential>`. */
  source: string
  /** The bytes as received (of a message too large to hold, its first bytes: `size` says how many it had). */
  payload: Buffer
  size?: number
  /**
   * The datalogger the topic names: its meters only. Absent over HTTP (the credential writes any
   * meter); null when an MQTT topic names none (`campus//senml`): the message is refused.
   */
  datalogger?: string | null
  /** When the service took the message: "now" of relative SenML times and of the age bounds. */
  receivedMs: number
  /** Only this record of the pack (a quarantined record replayed). */
  onlyRecord?: number
}

export type { Reading }

export interface TakenSample {
  meterId: number
  /** Epoch microseconds, whole. */
  timeUs: number
  reading: Reading
  /** In the meter's catalogue unit. */
  value: number
}

/**
 * Why something was refused, as a class (the metrics' label); `reason` says it in words.
 * docs/LIVE.md lists them with what each means.
 */
export const REFUSAL_CODES = [
  'too_large',
  'malformed_json',
  'not_senml',
  'bad_topic',
  'bad_record',
  'not_numeric',
  'out_of_range',
  'unknown_meter',
  'other_datalogger',
  'register_of_mean',
  'unit',
  'before_install',
  'after_removal',
  'before_live',
  'too_old',
  'future',
  'not_written',
] as const
export type RefusalCode = (typeof REFUSAL_CODES)[number]

export interface Refused {
  /** The record's index in the pack; null: the whole payload. */
  recordIndex: number | null
  code: RefusalCode
  reason: string
}

export interface IntakeLimits {
  /** A sample stamped further ahead of its message's arrival than this is refused. */
  maxFutureMs: number
  /** A sample stamped further back than this before its message's arrival is refused. */
  maxAgeMs: number
  /** A message larger than this is refused whole, unread. */
  maxBytes: number
}

/** A sample stamped further ahead of the time it arrived than this is refused. */
export const DEFAULT_MAX_FUTURE_MS = 5 * 60_000
export const DEFAULT_INTAKE_LIMITS: IntakeLimits = {
  maxFutureMs: DEFAULT_MAX_FUTURE_MS,
  maxAgeMs: 30 * 86_400_000,
  maxBytes: 1_048_576,
}

/** A message read: its pack's samples (not judged yet) and what it refused by itself. */
export interface ResolvedMessage {
  message: LiveMessage
  samples: SenmlSample[]
  refused: Refused[]
}

export interface Intake {
  samples: TakenSample[]
  refused: Refused[]
}

const whole = (message: LiveMessage, code: RefusalCode, reason: string): ResolvedMessage => ({
  message,
  samples: [],
  refused: [{ recordIndex: null, code, reason }],
})

/** Reads a message as it arrives: its size, its topic, its JSON, its SenML. */
export function resolveMessage(message: LiveMessage, maxBytes: number): ResolvedMessage {
  const size = message.size ?? message.payload.length
  if (size > maxBytes) return whole(message, 'too_large', `${size} bytes: the largest message taken is ${maxBytes}`)
  if (message.datalogger === null) return whole(message, 'bad_topic', 'the topic names no datalogger')
  let parsed: unknown
  try {
    parsed = JSON.parse(message.payload.toString('utf8'))
  } catch {
    return whole(message, 'malformed_json', 'malformed JSON')
  }
  const pack = resolvePack(parsed, message.receivedMs)
  if (!pack.ok) return whole(message, 'not_senml', pack.reason)
  const wanted = (index: number) => message.onlyRecord === undefined || message.onlyRecord === index
  return {
    message,
    samples: message.onlyRecord === undefined ? pack.samples : pack.samples.filter((s) => wanted(s.index)),
    refused: pack.refused
      .filter((r) => wanted(r.index))
      .map((r): Refused => ({ recordIndex: r.index, code: r.code, reason: r.reason })),
  }
}

/** The meters the samples of these messages name. */
export function namedMeters(messages: readonly ResolvedMessage[]): number[] {
  const meters = new Set<number>()
  for (const m of messages) for (let i = 0; i < m.samples.length; i++) meters.add((m.samples[i] as SenmlSample).meterId)
  return [...meters]
}

const iso = (ms: number) => new Date(ms).toISOString()

/** The samples of a message read, each taken or refused against the meters' facts and the limits. */
export function judgeMessage(
  resolved: ResolvedMessage,
  meters: ReadonlyMap<number, MeterFacts>,
  limits: Pick<IntakeLimits, 'maxFutureMs' | 'maxAgeMs'>,
): Intake {
  const { message } = resolved
  const refused = [...resolved.refused]
  const samples: TakenSample[] = []
  let sample: SenmlSample
  const refuse = (code: RefusalCode, reason: string) =>
    refused.push({ recordIndex: sample.index, code, reason: shortened(reason) })
  // the instant in words, only for a refusal's reason (most samples are taken)
  const at = () => iso(Math.floor(sample.timeUs / 1000))
  for (let i = 0; i < resolved.samples.length; i++) {
    sample = resolved.samples[i] as SenmlSample
    const meter = meters.get(sample.meterId)
    if (!meter) {
      refuse('unknown_meter', `unknown meter ${sample.meterId}`)
      continue
    }
    if (message.datalogger !== undefined && meter.datalogger !== message.datalogger) {
      refuse('other_datalogger', `meter ${meter.id} is read by ${meter.datalogger}, not by ${message.datalogger}`)
      continue
    }
    const amount = KINDS[meter.kind].combination === 'sum'
    if (sample.reading === 'register' && !amount) {
      refuse(
        'register_of_mean',
        `a register (s) for meter ${meter.id}, a ${meter.kind} meter: only energy and volume meters keep one`,
      )
      continue
    }
    const conversion = senmlConversion(sample.unit, meter.unit)
    if ('reason' in conversion) {
      refuse('unit', conversion.reason)
      continue
    }
    const value = conversion.convert(sample.value)
    if (!(Math.abs(value) <= REFUSED_MAGNITUDE)) {
      refuse('out_of_range', `${value} ${meter.unit}: no reading of meter ${meter.id} exceeds ${REFUSED_MAGNITUDE}`)
      continue
    }
    const ms = sample.timeUs / 1000
    if (meter.fromMs !== null && ms < meter.fromMs) {
      refuse('before_install', `${at()} is before meter ${meter.id} was installed (${iso(meter.fromMs)})`)
      continue
    }
    if (meter.toMs !== null && ms >= meter.toMs) {
      refuse('after_removal', `${at()} is after meter ${meter.id} was removed (${iso(meter.toMs)})`)
      continue
    }
    if (ms > message.receivedMs + limits.maxFutureMs) {
      refuse('future', `${at()} is more than ${limits.maxFutureMs / 1000} s ahead of the time the message arrived`)
      continue
    }
    if (ms < message.receivedMs - limits.maxAgeMs) {
      refuse('too_old', `${at()} is more than ${limits.maxAgeMs / 86_400_000} days before the message arrived`)
      continue
    }
    if (meter.liveFromMs !== null && ms < meter.liveFromMs) {
      refuse(
        'before_live',
        `${at()} is before meter ${meter.id} takes live samples (${iso(meter.liveFromMs)}): a seed or an import wrote its quarter hours up to then`,
      )
      continue
    }
    // the sample as read, unless its unit was converted (one object less a sample; never changed)
    samples.push(
      value === sample.value
        ? sample
        : { meterId: sample.meterId, timeUs: sample.timeUs, reading: sample.reading, value },
    )
  }
  return { samples, refused }
}
