import { AMOUNT_METER_IDS } from '../catalogue/meters.ts'
import { KINDS } from '../catalogue/quantities.ts'

/** The kinds whose quarter-hour value is an amount (energy, volume, rain): a virtual meter of one is an amount meter. */
export const AMOUNT_KINDS: readonly string[] = Object.entries(KINDS)
  .filter(([, kind]) => kind.combination === 'sum')
  .map(([name]) => name)

/**
 * A meter's quarter-hour value in SQL over a `data_15m` row: the amount of an energy or volume
 * meter (`sum_value`), the mean of any other (`avg_value`). Every total, bucket mean, rollup and
 * mirrored column of a meter is made of it. An amount meter is one of the catalogue's, or a
 * virtual meter of an amount kind (`virtual_meters`, read once per statement).
 */
const AMOUNT = `(meter_id = any('{${AMOUNT_METER_IDS.join(',')}}'::int[]) or meter_id = any(array(select id from virtual_meters where kind = any('{${AMOUNT_KINDS.join(',')}}'::text[]))))`

export const METER_QUARTER_VALUE = `(case when ${AMOUNT} then sum_value else avg_value end)`

/**
 * A meter's lowest and highest reading of a quarter hour, as a report shows them: an amount
 * meter's are its quarter-hour amounts (`sum_value`; an increment is a fact of the sampling), any
 * other's its smallest and largest samples.
 */
export const METER_QUARTER_LOW = `(case when ${AMOUNT} then sum_value else min_value end)`
export const METER_QUARTER_HIGH = `(case when ${AMOUNT} then sum_value else max_value end)`
