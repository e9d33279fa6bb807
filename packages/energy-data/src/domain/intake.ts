/**
 * What a live message (one SenML pack, from MQTT or HTTP) gives: the samples to take, in each
 * meter's catalogue unit, and what goes to the quarantine with its reason. Pure: the meters'
 * current facts (dates, datalogger) come from the caller.
 */
import { KINDS, type KindName, senmlConversion, type UnitId } from '../catalogue/quantities.ts'
import { resolvePack } from './senml.ts'

export interface MeterFacts {
  id: number
  datalogger: string
  kind: KindName
  unit: UnitId
  /** Epoch milliseconds, or null when open. */
  fromMs: number | null
  toMs: number | null
}

export interface LiveMessage {
  /** `mqtt:campus/DL-X/senml`, `http:<key name>`, `replay:<quarantine id>`. */
  source: string
  payload: string
  /** The datalogger the topic names; its meters only. Absent over HTTP. */
  datalogger?: string
  /** When the service took the message: "now" of relative SenML times and of the future bound. */
  receivedMs: number
  /** Only this record of the pack (a quarantined record replayed). */
  onlyRecord?: number
}

/** `value`: a reading (an amount meter's increment); `register`: a cumulative register reading. */
export type Reading = 'value' | 'register'

export interface TakenSample {
  meterId: number
  timeMs: number
  reading: Reading
  /** In the meter's catalogue unit. */
  value: number
}

/** Why something was refused, as a class (the metrics' label); `reason` says it in words. */
export type RefusalCode =
  | 'malformed_json'
  | 'not_senml'
  | 'bad_record'
  | 'unknown_meter'
  | 'other_datalogger'
  | 'register_of_mean'
  | 'unit'
  | 'not_finite'
  | 'before_install'
  | 'after_removal'
  | 'future'

export interface Refused {
  /** The record's index in the pack; null: the whole payload. */
  recordIndex: number | null
  code: RefusalCode
  reason: string
}

export interface Intake {
  samples: TakenSample[]
  refused: Refused[]
}

/** A sample stamped further ahead of the time it arrived than this is refused. */
export const DEFAULT_MAX_FUTURE_MS = 5 * 60_000

/** The records of a message, each taken or refused with its reason. */
export function readMessage(
  message: LiveMessage,
  meters: ReadonlyMap<number, MeterFacts>,
  maxFutureMs = DEFAULT_MAX_FUTURE_MS,
): Intake {
  let parsed: unknown
  try {
    parsed = JSON.parse(message.payload)
  } catch {
    return { samples: [], refused: [{ recordIndex: null, code: 'malformed_json', reason: 'malformed JSON' }] }
  }
  const pack = resolvePack(parsed, message.receivedMs)
  if (!pack.ok) return { samples: [], refused: [{ recordIndex: null, code: 'not_senml', reason: pack.reason }] }
  const wanted = (index: number) => message.onlyRecord === undefined || message.onlyRecord === index
  const refused: Refused[] = pack.refused
    .filter((r) => wanted(r.index))
    .map(
      (r): Refused => ({
        recordIndex: r.index,
        code: /not finite|a finite/.test(r.reason) ? 'not_finite' : 'bad_record',
        reason: r.reason,
      }),
    )
  const samples: TakenSample[] = []
  for (const sample of pack.samples) {
    if (!wanted(sample.index)) continue
    const refuse = (code: RefusalCode, reason: string) => refused.push({ recordIndex: sample.index, code, reason })
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
    if (sample.kind === 'sum' && !amount) {
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
    if (!Number.isFinite(value)) {
      refuse('not_finite', 'the value is not finite in the meter unit')
      continue
    }
    if (Number.isNaN(new Date(sample.timeMs).getTime())) {
      refuse('bad_record', `t resolves to ${sample.timeMs / 1000} s, outside the calendar`)
      continue
    }
    const at = new Date(sample.timeMs).toISOString()
    if (meter.fromMs !== null && sample.timeMs < meter.fromMs) {
      refuse(
        'before_install',
        `${at} is before meter ${meter.id} was installed (${new Date(meter.fromMs).toISOString()})`,
      )
      continue
    }
    if (meter.toMs !== null && sample.timeMs >= meter.toMs) {
      refuse('after_removal', `${at} is after meter ${meter.id} was removed (${new Date(meter.toMs).toISOString()})`)
      continue
    }
    if (sample.timeMs > message.receivedMs + maxFutureMs) {
      refuse('future', `${at} is more than ${maxFutureMs / 1000} s ahead of the time the message arrived`)
      continue
    }
    samples.push({
      meterId: meter.id,
      timeMs: sample.timeMs,
      reading: sample.kind === 'sum' ? 'register' : 'value',
      value,
    })
  }
  return { samples, refused }
}
