/**
 * GitLab's own client library against a listening server, used as its users do: python-gitlab
 * (Debian's python3-gitlab) with an OAuth access token and with a personal access token. It
 * parses an answer only when its Content-Type is exactly `application/json`, as GitLab's API
 * sends it. And @gitbeaker/rest, GitLab's TypeScript client, as a Node script would use it.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { promisify } from 'node:util'
import { Gitlab } from '@gitbeaker/rest'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPersonalAccessToken, createUser } from '../src/accounts.ts'
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

/** An administrator (root) and three more users to page through; root's access token (scope api). */
async function administratorAndWalkers(server: TestServer, fixtures: Awaited<ReturnType<typeof seed>>) {
  const { user: root } = await createUser(server.db, {
    username: 'root',
    password: 'long enough password',
    admin: true,
  })
  for (const n of [1, 2, 3]) await createUser(server.db, { username: `walker${n}`, password: 'long enough password' })
  const issued = await issueToken(server, { applicationId: fixtures.web.id, userId: root.id, scopes: ['api'] })
  return issued.access_token
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

  it('an administrator: a user by username, the users walked page by page through the Link headers, an application created, listed and deleted', async () => {
    const accessToken = await administratorAndWalkers(server, fixtures)
    const seen = await pythonGitlab(
      server.url,
      { oauth_token: accessToken },
      `
gl.auth()
bob = gl.users.list(username="bob")
pages = gl.users.list(iterator=True, per_page=2)
walked = [u.username for u in pages]
first = gl.users.list(per_page=2, page=1)
made = gl.applications.create({"name": "From python-gitlab", "redirect_uri": "https://py.example/cb", "scopes": "read_user openid"})
listed = made.application_id in [a.application_id for a in gl.applications.list()]
gl.applications.delete(made.id)
after = made.application_id in [a.application_id for a in gl.applications.list()]
print(json.dumps({
  "bob": [u.username for u in bob],
  "walked": walked,
  "total": pages.total, "total_pages": pages.total_pages, "per_page": pages.per_page,
  "first": [u.username for u in first],
  "me": {"web_url": gl.user.web_url, "avatar_url": gl.user.avatar_url, "is_admin": gl.user.is_admin},
  "app": {"name": made.application_name, "has_secret": len(made.secret) > 20, "listed": listed, "after_delete": after},
}))
`,
    )
    const everyone = (await server.db.selectFrom('users').select('username').orderBy('id').execute()).map(
      (u) => u.username,
    )
    expect(seen).toEqual({
      bob: ['bob'],
      walked: everyone,
      total: everyone.length,
      total_pages: Math.ceil(everyone.length / 2),
      per_page: 2,
      first: everyone.slice(0, 2),
      me: { web_url: `${server.url}/root`, avatar_url: null, is_admin: true },
      app: { name: 'From python-gitlab', has_secret: true, listed: true, after_delete: false },
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

describe("@gitbeaker/rest (GitLab's TypeScript client)", () => {
  let server: TestServer
  let fixtures: Awaited<ReturnType<typeof seed>>
  let admin: InstanceType<typeof Gitlab>
  beforeAll(async () => {
    server = await startServer()
    fixtures = await seed(server.db, server.settings.secretKey)
    const oauthToken = await administratorAndWalkers(server, fixtures)
    admin = new Gitlab({ host: server.url, oauthToken })
  })
  afterAll(async () => server?.close())

  it('with a personal access token: the current user, a user by id and by username', async () => {
    const { token } = await createPersonalAccessToken(server.db, {
      userId: fixtures.alice.id,
      name: 'gitbeaker',
      scopes: ['read_api'],
    })
    const api = new Gitlab({ host: server.url, token })
    const me = await api.Users.showCurrentUser()
    expect([me.username, me.web_url, me.avatar_url]).toEqual(['alice', `${server.url}/alice`, null])
    expect((await api.Users.show(fixtures.bob.id)).username).toBe('bob')
    expect((await api.Users.all({ username: 'bob' })).map((u) => u.username)).toEqual(['bob'])
  })

  it('a list walked page by page, with its pagination info', async () => {
    const everyone = (await server.db.selectFrom('users').select('username').orderBy('id').execute()).map(
      (u) => u.username,
    )
    const all = await admin.Users.all({ perPage: 2 })
    expect(all.map((u) => u.username)).toEqual(everyone)
    const first = await admin.Users.all({ perPage: 2, page: 1, showExpanded: true, maxPages: 1 })
    expect(first.data.map((u) => u.username)).toEqual(everyone.slice(0, 2))
    expect(first.paginationInfo).toEqual({
      total: everyone.length,
      next: 2,
      current: 1,
      previous: null,
      perPage: 2,
      totalPages: Math.ceil(everyone.length / 2),
    })
  })

  it('an application created, listed and deleted', async () => {
    const made = await admin.Applications.create('From gitbeaker', 'https://ts.example/cb', 'read_user', {
      confidential: false,
    })
    expect([made.application_name, made.confidential]).toEqual(['From gitbeaker', false])
    expect((await admin.Applications.all()).map((a) => a.application_id)).toContain(made.application_id)
    await admin.Applications.remove(made.id)
    expect((await admin.Applications.all()).map((a) => a.application_id)).not.toContain(made.application_id)
  })
})
