import fc from 'fast-check'

/** Values that have broken parsers, queries, logs and headers somewhere. */
export const HOSTILE_STRINGS = [
  '',
  ' ',
  'x'.repeat(10_000),
  '\u0000',
  'a\u0000b',
  '\r\nX-Injected: 1',
  '%0d%0aSet-Cookie:%20evil=1',
  "' OR '1'='1",
  "'; DROP TABLE users; --",
  '1; select pg_sleep(5)',
  '$1',
  '../../../../etc/passwd',
  '<script>alert(1)</script>',
  '{{7*7}}',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text is the attack
  '${jndi:ldap://x}',
  '\u202e\u0301\ud83d\ude00',
  '\ud800',
  'ﾟ･✿ヾ╲(｡◕‿◕｡)╱✿･ﾟ',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  '9'.repeat(400),
  '-9223372036854775809',
  '0x1F',
  '1.5',
  'true',
  'null',
  '[]',
  '{}',
  '2025-02-30 10:00:00',
  '2025-13-01T00:00:00Z',
  '0000-00-00 00:00:00',
  '99999-01-01 00:00:00',
  '2025-10-26T02:30:00+25:00',
  'javascript:alert(1)',
  'http://evil.example/',
  '//evil.example',
]

export const hostileString = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  )

type Schema = Record<string, unknown>

/**
 * A value that satisfies a JSON schema, roughly: enough to get past validation some of the time.
 * `overrides` gives an object's named properties values of their own, half of the time.
 */
export function fromSchema(
  schema: Schema | undefined,
  depth = 0,
  overrides: Record<string, fc.Arbitrary<unknown>> = {},
): fc.Arbitrary<unknown> {
  if (!schema || depth > 3) return fc.string({ maxLength: 12 })
  if ('const' in schema) return fc.constant(schema.const)
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]))
  const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined
  if (Array.isArray(variants) && variants.length) return fc.oneof(...variants.map((v) => fromSchema(v, depth + 1)))
  const examples = schema.examples as unknown[] | undefined
  const base = baseArbitrary(schema, depth, overrides)
  if (Array.isArray(examples) && examples.length) return fc.oneof(fc.constantFrom(...examples), base)
  if (schema.default !== undefined) return fc.oneof(fc.constant(schema.default), base)
  return base
}

function baseArbitrary(
  schema: Schema,
  depth: number,
  overrides: Record<string, fc.Arbitrary<unknown>>,
): fc.Arbitrary<unknown> {
  const type = Array.isArray(schema.type) ? (schema.type as string[]).find((t) => t !== 'null') : schema.type
  switch (type) {
    case 'integer':
      return fc.integer({
        min: typeof schema.minimum === 'number' ? schema.minimum : -1000,
        max: typeof schema.maximum === 'number' ? schema.maximum : 100_000,
      })
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 })
    case 'boolean':
      return fc.boolean()
    case 'array':
      return fc.array(fromSchema(schema.items as Schema, depth + 1), { maxLength: 4 })
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>
      const required = (schema.required ?? []) as string[]
      const shape: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [name, property] of Object.entries(properties)) {
        const own = overrides[name]
        shape[name] = own ? fc.oneof(own, fromSchema(property, depth + 1)) : fromSchema(property, depth + 1)
      }
      return fc.record(shape, { requiredKeys: required.filter((r) => r in shape) })
    }
    default:
      if (schema.format === 'date-time') {
        return fc
          .date({ min: new Date('2024-01-01T00:00:00Z'), max: new Date('2026-12-31T00:00:00Z'), noInvalidDate: true })
          .map((d) => d.toISOString())
      }
      return fc.string({ minLength: (schema.minLength as number) ?? 0, maxLength: 24 })
  }
}
