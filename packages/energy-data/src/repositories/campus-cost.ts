import type pg from 'pg'
import { CAMPUS_METERS, meterEntry } from '../catalogue/meters.ts'
import { type Commodity, commodityOf } from '../catalogue/quantities.ts'
import { DEFAULT_TAGS } from '../domain/tags.ts'
import { localDate, localMidnight } from '../domain/time.ts'
import { pricedTotals } from './costs.ts'

/** The campus's cost over a span: per commodity and in all; null where a quarter hour had no tariff. */
export interface SpanCost {
  /** Whether any of the meters holds a quarter hour in the span. */
  data: boolean
  electricity: number | null
  water: number | null
  total: number | null
}

export interface CampusCost {
  today: SpanCost
  month: SpanCost
  currency: string | null
}

/**
 * What the campus (its connection meters, `CAMPUS_METERS`) has cost today and this month so far,
 * local days of `zone`, at the tariffs in force: the quarter hours tagged `ok`, as every view counts.
 */
export async function campusCost(pool: pg.Pool, zone: string, now: number): Promise<CampusCost> {
  const today = localDate(now, zone)
  const spans = { today: localMidnight(today, zone), month: localMidnight(`${today.slice(0, 8)}01`, zone) }
  let currency: string | null = null
  const cost = async (from: number): Promise<SpanCost> => {
    const priced = await pricedTotals(pool, CAMPUS_METERS, 'cost', { lo: from, hi: now, tags: DEFAULT_TAGS })
    currency = priced.currency
    const of = (commodity: Commodity) => {
      const ids = CAMPUS_METERS.filter((id) => {
        const entry = meterEntry(id)
        return entry && commodityOf(entry.kind) === commodity && priced.totals.has(id)
      })
      const values = ids.map((id) => priced.totals.get(id) ?? null)
      return values.length === 0 || values.includes(null) ? null : (values as number[]).reduce((a, b) => a + b, 0)
    }
    const electricity = of('electricity')
    const water = of('water')
    const total = electricity === null || water === null ? null : electricity + water
    return { data: priced.totals.size > 0, electricity, water, total }
  }
  const [day, month] = [await cost(spans.today), await cost(spans.month)]
  return { today: day, month, currency }
}
