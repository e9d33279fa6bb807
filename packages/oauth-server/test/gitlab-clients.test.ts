/**
 * GitLab's own client library against a listening server, used as its users do: python-gitlab
 * (Debian's python3-gitlab) with an OAuth access token and with a personal access token. It
 * parses an answer only when its Content-Type is exactly `application/json`, as GitLab's API
 * sends it.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPersonalAccessToken } from '../src/accounts.ts'
import { OAUTH_SERVER_VERSION } from '../src/service.ts'
import { issueToken, seed, startServer, type TestServer } from './helpers.ts'

const PYTHON = '/usr/bin/python3'
const present =
  existsSync(PYTHON) &&
  (await promisify(execFile)(PYTHON, ['-c', 'import gitlab'])
    .then(() => true)
    .catch(() => false))
if (!present && !process.env.CI) {
  process.stdout.write(
    "[test] python-gitlab tests skipped: install Debian's python3-gitlab (apt-get install python3-gitlab); CI runs them\n",
  )
}

/** Runs `script` with python-gitlab, `gl` made from the arguments; its stdout parsed as JSON. */
async function pythonGitlab(url: string, auth: { oauth_token: string } | { private_token: string }, script: string) {
  const program = `
import json, sys, gitlab
gl = gitlab.Gitlab(sys.argv[1], **json.loads(sys.argv[2]))
${script}
`
  const { stdout } = await promisify(execFile)(PYTHON, ['-c', program, url, JSON.stringify(auth)])
  return JSON.parse(stdout) as Record<string, unknown>
}

describe.runIf(present || process.env.CI)("python-gitlab (GitLab's Python client)", () => {
  let server: TestServer
  let fixtures: Awaited<ReturnType<typeof seed>>
  beforeAll(async () => {
    server = await startServer()
    fixtures = await seed(server.db, server.settings.secretKey)
  })
  afterAll(async () => server?.close())

  const script = `
gl.auth()
me = gl.user
other = gl.users.get(me.id)
print(json.dumps({"username": me.username, "id": me.id, "by_id": other.username, "version": list(gl.version())}))
`

  it('with an OAuth token: auth, the current user, a user by id, the version', async () => {
    const { access_token: accessToken } = await issueToken(server, {
      applicationId: fixtures.web.id,
      userId: fixtures.alice.id,
      scopes: ['read_user'],
    })
    const seen = await pythonGitlab(server.url, { oauth_token: accessToken }, script)
    expect(seen).toEqual({
      username: 'alice',
      id: fixtures.alice.id,
      by_id: 'alice',
      version: [OAUTH_SERVER_VERSION, 'unknown'],
    })
  })

  it('with a personal access token: the same', async () => {
    const { token } = await createPersonalAccessToken(server.db, {
      userId: fixtures.alice.id,
      name: 'python-gitlab',
      scopes: ['read_api'],
    })
    const seen = await pythonGitlab(server.url, { private_token: token }, script)
    expect(seen).toMatchObject({ username: 'alice', by_id: 'alice', version: [OAUTH_SERVER_VERSION, 'unknown'] })
  })
})
