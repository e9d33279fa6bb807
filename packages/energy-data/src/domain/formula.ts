/**
 * A virtual meter's formula: a linear combination of meters with constant coefficients
 * (`860 - 861 - 862`, `0.5*900 + 901`, `-2.5e-1 * 900`). Pure: which meters exist and what
 * they measure is the command's business.
 */

export interface Term {
  meterId: number
  coefficient: number
}

const NUMBER = String.raw`(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?`
// one term: a sign (or none, first), an optional coefficient and `*`, a meter id
const TERM = new RegExp(String.raw`^\s*([-+])?\s*(?:(${NUMBER})\s*\*\s*)?(\d{1,9})\s*`)

/** The terms of `text`, or why it is not a formula. */
export function parseFormula(text: string): Term[] | { error: string } {
  const terms: Term[] = []
  let rest = text
  while (rest.trim() !== '') {
    const match = TERM.exec(rest)
    if (!match || (terms.length > 0 && match[1] === undefined)) {
      return {
        error: `cannot read ${JSON.stringify(rest.trim())}: terms are [coefficient *] meter id, joined by + or -`,
      }
    }
    const [whole, sign, coefficient = '1', id] = match
    const value = Number(coefficient) * (sign === '-' ? -1 : 1)
    if (!Number.isFinite(value) || value === 0)
      return { error: `the coefficient of meter ${id} must be a non-zero number` }
    const meterId = Number(id)
    if (terms.some((t) => t.meterId === meterId)) return { error: `meter ${meterId} appears twice` }
    terms.push({ meterId, coefficient: value })
    rest = rest.slice(whole.length)
  }
  if (terms.length === 0) return { error: 'the formula names no meter' }
  return terms
}

/** The formula written back in one form: `860 - 861 - 862`, `0.5*900 + 901`. */
export function formatFormula(terms: readonly Term[]): string {
  return terms
    .map((t, i) => {
      const size = Math.abs(t.coefficient)
      const term = size === 1 ? String(t.meterId) : `${size}*${t.meterId}`
      if (i === 0) return t.coefficient < 0 ? `-${term}` : term
      return `${t.coefficient < 0 ? '-' : '+'} ${term}`
    })
    .join(' ')
}
