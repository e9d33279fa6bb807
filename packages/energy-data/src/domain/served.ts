/**
 * The digits of every number the data API serves: 12 significant digits. A double carries 15 to
 * 17, and past the twelfth they are the noise of binary arithmetic: the same day summed from its
 * quarter hours or from its rollup ends in 92.2269999999999 or 92.227, a sum of 105.8265s in
 * 105.82650000000001. Twelve digits are far beyond any meter's resolution (a millionth of a kWh
 * on a million kWh) and change a value by at most 5e-13 of it.
 */
export const SERVED_DIGITS = 12

/** A number computed in the service, as the API serves it. */
export const served = (x: number): number => Number(x.toPrecision(SERVED_DIGITS))

/**
 * The text of a float8 SQL expression as the API serves it, `missing` for NaN and infinities (not
 * JSON numbers). A value of at most three decimals (as a datalogger's reading is stored) is written
 * as it is, in its shortest exact form: it is the double nearest its thousandths, 0.05 us a value to
 * tell. Any other is rounded to SERVED_DIGITS significant digits through numeric, about 1 us a
 * value, so only computed values (means, sums, shares) pay it.
 */
export const servedSql = (x: string, missing: string): string =>
  `case when (${x}) = round((${x}) * 1000) / 1000 and abs(${x}) < 'Infinity'::float8 then (${x})::text ` +
  `when (${x}) > '-Infinity'::float8 and (${x}) < 'Infinity'::float8 ` +
  `then round((${x})::numeric, ${SERVED_DIGITS - 1} - floor(log(abs(${x})))::int)::float8::text else ${missing} end`
