import type { FastifySchemaValidationError } from 'fastify/types/schema.js'
import type { ValidationIssue } from '../errors.ts'

const PART: Record<string, string> = {
  querystring: 'query',
  params: 'path',
  body: 'body',
  headers: 'header',
}

function readable(error: FastifySchemaValidationError): { msg: string; type: string } {
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'required':
      return { msg: 'Field required', type: 'missing' }
    case 'type':
      return { msg: `Input should be a valid ${String(params.type)}`, type: `${String(params.type)}_type` }
    case 'enum':
      return {
        msg: `Input should be ${(params.allowedValues as unknown[]).map((v) => `'${String(v)}'`).join(', ')}`,
        type: 'enum',
      }
    case 'anyOf':
      return { msg: 'Input does not match any allowed value', type: 'value_error' }
    case 'const':
      return { msg: `Input should be '${String(params.allowedValue)}'`, type: 'literal_error' }
    case 'pattern':
      return { msg: `String should match pattern '${String(params.pattern)}'`, type: 'string_pattern_mismatch' }
    case 'format':
      return { msg: `Input should be a valid ${String(params.format)}`, type: `${String(params.format)}_parsing` }
    case 'minimum':
      return { msg: `Input should be greater than or equal to ${String(params.limit)}`, type: 'greater_than_equal' }
    case 'maximum':
      return { msg: `Input should be less than or equal to ${String(params.limit)}`, type: 'less_than_equal' }
    case 'minLength':
      return { msg: `String should have at least ${String(params.limit)} characters`, type: 'string_too_short' }
    case 'maxLength':
      return { msg: `String should have at most ${String(params.limit)} characters`, type: 'string_too_long' }
    case 'maxItems':
      return { msg: `List should have at most ${String(params.limit)} items`, type: 'too_long' }
    case 'additionalProperties':
      return { msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }
    default:
      return { msg: error.message ?? 'Invalid input', type: error.keyword }
  }
}

/** Turns Ajv errors of one request part into FastAPI-style issues (`loc: ["query", "start_datetime"]`). */
export function toValidationIssues(errors: FastifySchemaValidationError[], context: string): ValidationIssue[] {
  const part = PART[context] ?? context
  const seen = new Set<string>()
  const issues: ValidationIssue[] = []
  for (const error of errors) {
    // anyOf reports every branch; keep the summary, not the noise
    if (errors.some((e) => e.keyword === 'anyOf') && (error.keyword === 'const' || error.keyword === 'type')) {
      if (error.instancePath && errors.some((e) => e.keyword === 'anyOf' && e.instancePath === error.instancePath))
        continue
    }
    const path = (error.instancePath ?? '')
      .split('/')
      .filter(Boolean)
      .map((p) => (/^\d+$/.test(p) ? Number(p) : decodeURIComponent(p.replace(/~1/g, '/').replace(/~0/g, '~'))))
    const params = error.params as Record<string, unknown>
    if (error.keyword === 'required' && typeof params.missingProperty === 'string') path.push(params.missingProperty)
    if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
      path.push(params.additionalProperty)
    }
    const { msg, type } = readable(error)
    const key = `${path.join('.')}|${type}`
    if (seen.has(key)) continue
    seen.add(key)
    issues.push({ loc: [part, ...path], msg, type })
  }
  return issues
}

const NO_NAMES: readonly string[] = Object.freeze([])

/**
 * Names of the parameters of `values` (a parsed query, form body or path) holding a value `test`
 * accepts, alone or in a list. Runs on every request: nothing is allocated unless one matches.
 */
export function parametersWhere(values: unknown, test: (value: unknown) => boolean): readonly string[] {
  if (!values || typeof values !== 'object') return NO_NAMES
  let names: string[] | undefined
  for (const name in values) {
    const value = (values as Record<string, unknown>)[name]
    if (!(Array.isArray(value) ? value.some(test) : test(value))) continue
    names ??= []
    names.push(name)
  }
  return names ?? NO_NAMES
}

/** A value no parameter may hold in the parts it names, and what refusing it says. */
export interface ParameterRule {
  parts: ReadonlyArray<'query' | 'body' | 'path'>
  test: (value: unknown) => boolean
  msg: string
  type: string
}

/** Ajv's type coercion turns "Infinity" and "NaN" into numbers without checking them; no declared number is meant to be infinite. */
export const FINITE_NUMBERS: ParameterRule = {
  parts: ['query', 'path'],
  test: (value) => typeof value === 'number' && !Number.isFinite(value),
  msg: 'Input should be a finite number',
  type: 'finite_number',
}

/**
 * The parameters of a request that `rules` refuse, as validation issues; undefined when none
 * is (every request asks: nothing is allocated then).
 */
export function refusedParameters(
  request: { query: unknown; body: unknown; params: unknown },
  rules: readonly ParameterRule[],
): ValidationIssue[] | undefined {
  let issues: ValidationIssue[] | undefined
  for (const rule of rules) {
    for (const part of rule.parts) {
      const names = parametersWhere(
        part === 'query' ? request.query : part === 'body' ? request.body : request.params,
        rule.test,
      )
      for (const name of names) {
        issues ??= []
        issues.push({ loc: [part, name], msg: rule.msg, type: rule.type })
      }
    }
  }
  return issues
}
