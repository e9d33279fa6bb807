/**
 * Both services' OpenAPI documents, as they serve them, against Redocly's `recommended` rules
 * (the rules a generated client or a documentation portal relies on): no error on either, and an
 * operationId on every operation (a warning only, there). A rule turned off is named in
 * REDOCLY_RULES with the reason.
 */
import { createConfig, lintFromString, type RawUniversalConfig } from '@redocly/openapi-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Harness, startHarness } from '../../energy-data/test/harness.ts'
import { startServer, type TestServer } from '../../oauth-server/test/helpers.ts'

/** Redocly's recommended set, with the rules this project turns off and why. */
const REDOCLY_RULES: RawUniversalConfig = {
  extends: ['recommended'],
  rules: {
    // the contract fixes `/metadata/meters/` and `/metadata/dataloggers/`, slash included
    'no-path-trailing-slash': 'off',
  },
}

let oauth: TestServer
let energy: Harness
beforeAll(async () => {
  oauth = await startServer({}, { listen: false })
  energy = await startHarness({})
})
afterAll(async () => {
  await oauth?.close()
  await energy?.close()
})

async function problems(document: unknown) {
  const config = await createConfig(REDOCLY_RULES)
  const results = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config })
  return results
    .filter((r) => r.severity === 'error' || r.ruleId === 'operation-operationId')
    .map((r) => `${r.ruleId} ${r.location[0]?.pointer ?? ''}: ${r.message}`)
}

describe("Redocly's recommended rules", () => {
  it('the OAuth server: no error', async () => {
    const doc = (await oauth.app.inject({ url: '/openapi.json' })).json()
    expect(await problems(doc)).toEqual([])
  })
  it('the data API: no error', async () => {
    const doc = (await energy.app.inject({ url: '/openapi.json' })).json()
    expect(await problems(doc)).toEqual([])
  })
})
