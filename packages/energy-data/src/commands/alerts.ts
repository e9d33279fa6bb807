import { commandFailed, usageError } from '@campus/shared'
import type pg from 'pg'
import { Value } from 'typebox/value'
import { checkRule, createRule, deleteRule, listRules, RuleConflict, RuleInput } from '../alerts/rules.ts'

/**
 * `alert:create`, `alert:list`, `alert:delete`: the alert rules, the same checks as
 * `POST /alerts/rules` (the flags are its fields; `--for` of a threshold is its `quarters`).
 */

type Flags = Record<string, string | boolean | undefined>

const NUMBERS = ['meter', 'minutes', 'above', 'below', 'quarters', 'percent', 'count', 'for_seconds'] as const

export async function alertCreate(pool: pg.Pool, flags: Flags) {
  const input: Record<string, unknown> = {}
  for (const [flag, value] of Object.entries(flags)) {
    if (value === undefined) continue
    const field = flag === 'for' ? 'quarters' : flag.replace(/-/g, '_')
    if ((NUMBERS as readonly string[]).includes(field)) {
      const n = Number(value)
      if (typeof value !== 'string' || value.trim() === '' || !Number.isFinite(n))
        throw usageError(`--${flag} is a number`)
      input[field] = n
    } else input[field] = value
  }
  if (!Value.Check(RuleInput, input)) {
    const first = [...Value.Errors(RuleInput, input)][0]
    const where = first?.instancePath.replace(/^\//, '').replace(/_/g, '-')
    throw usageError(`${where ? `--${where}: ` : ''}${first?.message ?? 'not a rule'}`)
  }
  const checked = checkRule(input as RuleInput)
  const problem = (issues: Array<{ field: string; msg: string }>) =>
    usageError(issues.map((i) => `--${i.field.replace(/_/g, '-')}: ${i.msg}`).join('; '))
  if ('issues' in checked) throw problem(checked.issues)
  try {
    const created = await createRule(pool, checked.rule)
    if ('issues' in created) throw problem(created.issues)
    return created.rule
  } catch (error) {
    if (error instanceof RuleConflict) throw commandFailed(error.message)
    throw error
  }
}

export const alertList = (pool: pg.Pool) => listRules(pool)

export async function alertDelete(pool: pg.Pool, id: string | undefined) {
  if (id === undefined || !/^\d{1,9}$/.test(id)) throw usageError('--id is a rule id (alert:list shows them)')
  if (!(await deleteRule(pool, Number(id)))) throw commandFailed(`no alert rule ${id}`)
  return { deleted: Number(id) }
}
