/**
 * Alert rules: what an operator asks to be told about, checked before it is stored (the same
 * checks for `pnpm energy alert:create` and `POST /alerts/rules`).
 */
import type pg from 'pg'
import Type, { type Static } from 'typebox'

export const RULE_KINDS = ['stale', 'threshold', 'night-baseline', 'quarantine'] as const
export type RuleKind = (typeof RULE_KINDS)[number]

export const SEVERITIES = ['info', 'warning', 'critical'] as const

/** A rule as it is asked for: the API's body, the command line's flags. */
export const RuleInput = Type.Object(
  {
    name: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z_][A-Za-z0-9_:.-]{0,79}$',
        description: 'The `alertname` label (default: from the kind and what it watches)',
      }),
    ),
    kind: Type.Enum([...RULE_KINDS], { type: 'string', description: 'What the rule watches' }),
    datalogger: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'stale, quarantine' })),
    meter: Type.Optional(Type.Integer({ minimum: 1, description: 'stale, threshold, night-baseline' })),
    minutes: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 43_200,
        description: 'stale: no sample for this long; quarantine: the window',
      }),
    ),
    above: Type.Optional(Type.Number({ description: 'threshold: the quarter-hour value above this level' })),
    below: Type.Optional(Type.Number({ description: 'threshold: the quarter-hour value below this level' })),
    quarters: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 96,
        description: 'threshold: for this many consecutive complete quarter hours',
      }),
    ),
    percent: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        description: "night-baseline: the night's consumption above the median by this much",
      }),
    ),
    count: Type.Optional(
      Type.Integer({ minimum: 0, description: 'quarantine: more than this many quarantined records in `minutes`' }),
    ),
    for_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 604_800,
        description: "Prometheus's `for`: the condition holds this long (pending) before the alert fires; default 0",
      }),
    ),
    severity: Type.Optional(Type.Enum([...SEVERITIES], { type: 'string', description: 'default: warning' })),
  },
  { additionalProperties: false },
)
export type RuleInput = Static<typeof RuleInput>

/** A stored rule, as the API and the command line show it. */
export const Rule = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  kind: Type.String(),
  datalogger: Type.Union([Type.String(), Type.Null()]),
  meter: Type.Union([Type.Integer(), Type.Null()]),
  params: Type.Record(Type.String(), Type.Number()),
  for_seconds: Type.Integer(),
  severity: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
})
export type Rule = Static<typeof Rule>

export interface RuleIssue {
  field: string
  msg: string
}

/** What a rule of each kind needs; the issues, or the rule to store. */
export function checkRule(input: RuleInput): { issues: RuleIssue[] } | { rule: Omit<Rule, 'id' | 'created_at'> } {
  const issues: RuleIssue[] = []
  const need = (field: keyof RuleInput, why: string) => {
    if (input[field] === undefined) issues.push({ field, msg: `${input.kind} needs ${field} (${why})` })
  }
  const none = (...fields: Array<keyof RuleInput>) => {
    for (const field of fields)
      if (input[field] !== undefined) issues.push({ field, msg: `${input.kind} takes no ${field}` })
  }
  const params: Record<string, number> = {}
  switch (input.kind) {
    case 'stale':
      if ((input.datalogger === undefined) === (input.meter === undefined))
        issues.push({ field: 'datalogger', msg: 'stale watches one datalogger or one meter: give one of them' })
      need('minutes', 'no sample for this many minutes')
      none('above', 'below', 'quarters', 'percent', 'count')
      params.minutes = input.minutes ?? 0
      break
    case 'threshold':
      need('meter', 'the meter whose quarter hours are compared')
      if ((input.above === undefined) === (input.below === undefined))
        issues.push({ field: 'above', msg: 'threshold needs one level: above or below' })
      none('datalogger', 'minutes', 'percent', 'count')
      if (input.above !== undefined) params.above = input.above
      if (input.below !== undefined) params.below = input.below
      params.quarters = input.quarters ?? 1
      break
    case 'night-baseline':
      need('meter', 'the meter whose nights are compared')
      need('percent', 'how far above the median night')
      none('datalogger', 'minutes', 'above', 'below', 'quarters', 'count')
      params.percent = input.percent ?? 0
      break
    case 'quarantine':
      need('count', 'more than this many quarantined records')
      need('minutes', 'within this many minutes')
      none('meter', 'above', 'below', 'quarters', 'percent')
      params.count = input.count ?? 0
      params.minutes = input.minutes ?? 0
      break
  }
  if (issues.length) return { issues }
  const watched = input.datalogger ?? (input.meter === undefined ? 'any' : `meter_${input.meter}`)
  return {
    rule: {
      name: input.name ?? `${input.kind}_${watched}`.replace(/[^A-Za-z0-9_:.-]/g, '_'),
      kind: input.kind,
      datalogger: input.datalogger ?? null,
      meter: input.meter ?? null,
      params,
      for_seconds: input.for_seconds ?? 0,
      severity: input.severity ?? 'warning',
    },
  }
}

interface RuleRow {
  id: number
  name: string
  kind: string
  datalogger: string | null
  meter: number | null
  params: Record<string, number>
  for_seconds: number
  severity: string
  created_at: Date
}

const describe = (row: RuleRow): Rule => ({ ...row, created_at: row.created_at.toISOString() })

type Queryable = Pick<pg.Pool, 'query'>

export class RuleConflict extends Error {}

/**
 * Stores a checked rule; the issues when what it watches does not exist. A name already taken
 * throws RuleConflict.
 */
export async function createRule(
  db: Queryable,
  rule: Omit<Rule, 'id' | 'created_at'>,
): Promise<{ issues: RuleIssue[] } | { rule: Rule }> {
  const issues: RuleIssue[] = []
  if (rule.datalogger !== null) {
    const { rowCount } = await db.query('select 1 from dataloggers where id = $1', [rule.datalogger])
    if (!rowCount) issues.push({ field: 'datalogger', msg: `no datalogger ${rule.datalogger}` })
  }
  if (rule.meter !== null) {
    const { rowCount } = await db.query('select 1 from meters where id = $1', [rule.meter])
    if (!rowCount) issues.push({ field: 'meter', msg: `no meter ${rule.meter}` })
  }
  if (issues.length) return { issues }
  const { rows } = await db.query<RuleRow>(
    `insert into alert_rules (name, kind, datalogger, meter, params, for_seconds, severity)
     values ($1, $2, $3, $4, $5, $6, $7)
     on conflict (name) do nothing
     returning *`,
    [rule.name, rule.kind, rule.datalogger, rule.meter, JSON.stringify(rule.params), rule.for_seconds, rule.severity],
  )
  const row = rows[0]
  if (!row) throw new RuleConflict(`a rule named ${rule.name} exists already`)
  return { rule: describe(row) }
}

export async function listRules(db: Queryable): Promise<Rule[]> {
  const { rows } = await db.query<RuleRow>('select * from alert_rules order by id')
  return rows.map(describe)
}

/** Deletes a rule; its alerts stay as history (the next evaluation resolves an open one). Whether it existed. */
export async function deleteRule(db: Queryable, id: number): Promise<boolean> {
  const { rowCount } = await db.query('delete from alert_rules where id = $1', [id])
  return rowCount === 1
}
