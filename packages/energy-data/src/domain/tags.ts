/** Data-quality tags of the per-meter quarter hours. */
export const TAGS = ['ok', 'estimated', 'interpolated', 'suspect', 'invalid'] as const
type Tag = (typeof TAGS)[number]

/**
 * The one tag rule: the quarter hours every surface counts unless asked otherwise - `/data/meters`
 * by default, the meter report, the columns that mirror a meter (they hold the meter's value
 * where its quarter hour is `ok`, nothing elsewhere).
 */
export const DEFAULT_TAGS: readonly Tag[] = ['ok']

export const TAG_DESCRIPTION =
  'Data-quality tags to include: `ok` (measured), `estimated` (filled from a model or a neighbour), ' +
  '`interpolated` (filled between readings), `suspect` (out of the plausible range), `invalid` ' +
  '(known bad, kept for audit). An aggregated bucket whose quarter hours carry different tags says `mixed`.'

export function isTag(value: string): value is Tag {
  return (TAGS as readonly string[]).includes(value)
}
