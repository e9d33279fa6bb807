import { AMOUNT_METER_IDS } from '../catalogue/meters.ts'

/**
 * A meter's quarter-hour value in SQL over a `data_15m` row: the amount of an energy or volume
 * meter (`sum_value`), the mean of any other (`avg_value`). Every total, bucket mean, rollup and
 * mirrored column of a meter is made of it.
 */
const AMOUNT = `meter_id = any('{${AMOUNT_METER_IDS.join(',')}}'::int[])`

export const METER_QUARTER_VALUE = `(case when ${AMOUNT} then sum_value else avg_value end)`

/**
 * A meter's lowest and highest reading of a quarter hour, as a report shows them: an amount
 * meter's are its quarter-hour amounts (`sum_value`; an increment is a fact of the sampling), any
 * other's its smallest and largest samples.
 */
export const METER_QUARTER_LOW = `(case when ${AMOUNT} then sum_value else min_value end)`
export const METER_QUARTER_HIGH = `(case when ${AMOUNT} then sum_value else max_value end)`
