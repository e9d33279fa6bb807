/**
 * The digits of every number the data API serves: 12 significant digits. A double carries 15 to
 * 17, and past the twelfth they are the noise of binary arithmetic: the same day summed from its
 * quarter hours or from its rollup ends in 92.2269999999999 or 92.227, a sum of 105.8265s in
 * 105.82650000000001. Twelve digits are far beyond any meter's resolution (a millionth of a kWh
 * on a million kWh) and change a value by at most 5e-13 of it. The database writes doubles with
 * them (the service's `databaseOptions`), and what the service computes itself goes through `served`.
 */
export const SERVED_DIGITS = 12

/** A number computed in the service, as the API serves it. */
export const served = (x: number): number => Number(x.toPrecision(SERVED_DIGITS))
