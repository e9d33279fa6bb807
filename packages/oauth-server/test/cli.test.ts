/** `pnpm oauth ...`: the real command line on a real database, JSON on stdout. */
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runServiceCommand } from '@campus/shared'
import { createTestDatabase } from '@campus/shared/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyPassword } from '../src/passwords.ts'
import { oauthService } from '../src/service.ts'
import { basic, PASSWORD, postForm, seed, startServer, type TestServer } from './helpers.ts'

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url))

let server: TestServer

beforeAll(async () => {
  // the commands write from a process of their own: a change holds at the server's next request
  // only with OAUTH_CACHE_SYNC (else once its notification has arrived: README, caches)
  server = await startServer({ cacheSync: true })
  await seed(server.db, server.settings.secretKey)
})
afterAll(async () => {
  await server?.close()
})

function oauth(...args: string[]): Promise<CliResult> {
  return oauthOn(server.database.url, ...args)
}

const NODE_ARGS = ['--experimental-strip-types', '--disable-warning=ExperimentalWarning', CLI]
const cliEnv = (databaseUrl: string) => ({
  ...process.env,
  OAUTH_DATABASE_URL: databaseUrl,
  LOG_LEVEL: 'silent',
  MIGRATE_ON_START: '',
  // as pnpm runs it (npm test would pass its own: the usage then shows the npm form, tested below)
  npm_config_user_agent: 'pnpm/12.21.0',
})

interface CliResult {
  status: number | null
  json: Record<string, unknown>
  stderr: string
}

function oauthOn(databaseUrl: string, ...args: string[]): Promise<CliResult> {
  return oauthWithInput(databaseUrl, undefined, ...args)
}

/**
 * The command with `input` on its standard input (a pipe, as `echo ... |` gives). Run without
 * blocking: on the embedded database this process serves the database the command connects to.
 */
async function oauthWithInput(databaseUrl: string, input: string | undefined, ...args: string[]): Promise<CliResult> {
  const result = await runServiceCommand(oauthService, args, {
    env: cliEnv(databaseUrl),
    ...(input === undefined ? {} : { input }),
  })
  return { status: result.code, json: result.stdout ? JSON.parse(result.stdout) : {}, stderr: result.stderr }
}

const passwordGrant = (clientId: string, secret: string) =>
  postForm(server.url, '/oauth/token', {
    grant_type: 'password',
    username: 'alice',
    password: PASSWORD,
    scope: 'read_user',
    client_id: clientId,
    client_secret: secret,
  })

describe('pnpm oauth app:create / app:update', () => {
  it("makes an application without the password grant unless asked (RFC 9700), and switches it (GitLab's ropc_enabled) on and off", async () => {
    const created = await oauth(
      'app:create',
      '--name',
      'CLI app',
      '--redirect-uri',
      'https://cli.example/cb',
      '--scopes',
      'read_user',
    )
    expect(created.status).toBe(0)
    expect(created.json).toMatchObject({
      ropc_enabled: false,
      grant_types: ['authorization_code', 'implicit', 'refresh_token'],
    })
    const clientId = created.json.client_id as string
    const secret = created.json.client_secret as string
    expect((await passwordGrant(clientId, secret)).body.error).toBe('unauthorized_client')

    const enabled = await oauth('app:update', '--client-id', clientId, '--ropc')
    expect(enabled.status).toBe(0)
    expect(enabled.json).toMatchObject({ client_id: clientId, ropc_enabled: true })
    expect((await passwordGrant(clientId, secret)).status).toBe(200)

    const disabled = await oauth('app:update', '--client-id', clientId, '--no-ropc')
    expect(disabled.json).toMatchObject({ ropc_enabled: false })
    expect((await passwordGrant(clientId, secret)).body.error).toBe('unauthorized_client')

    // RFC 9126 6: an application may take pushed authorization requests only
    expect(created.json.require_pushed_authorization_requests).toBe(false)
    const pushedOnly = await oauth('app:update', '--client-id', clientId, '--par')
    expect(pushedOnly.json).toMatchObject({ require_pushed_authorization_requests: true })
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: 'https://cli.example/cb',
      response_type: 'code',
      scope: 'read_user',
    })
    const plain = await fetch(`${server.url}/oauth/authorize?${query}`, { redirect: 'manual' })
    const refusal = new URL(plain.headers.get('location') ?? '', server.url).searchParams
    expect([refusal.get('error'), refusal.get('error_description')]).toEqual([
      'invalid_request',
      'Pushed authorization request required: post the request to /oauth/par first (RFC 9126).',
    ])
    const again = await oauth('app:update', '--client-id', clientId, '--no-par')
    expect(again.json).toMatchObject({ require_pushed_authorization_requests: false })
  })

  it('refuses an unknown application, or trusting one a user owns, with one line on stderr', async () => {
    const unknown = await oauth('app:update', '--client-id', 'nope', '--ropc')
    expect(unknown.status).toBe(1)
    expect(unknown.stderr.trim()).toBe('error: no application with client id nope')
    const { alice } = {
      alice: await server.db.selectFrom('users').select('id').where('username', '=', 'alice').executeTakeFirstOrThrow(),
    }
    const owned = await server.db
      .insertInto('applications')
      .values({
        uid: 'owned-by-alice',
        secret_digest: null,
        name: 'Owned',
        redirect_uris: ['https://o.example/cb'],
        scopes: ['api'],
        confidential: false,
        owner_id: alice.id,
      })
      .returning('uid')
      .executeTakeFirstOrThrow()
    const trusted = await oauth('app:update', '--client-id', owned.uid, '--trusted')
    expect(trusted.status).toBe(1)
    expect(trusted.stderr).toContain('only instance-wide applications can be trusted')
  })
})

describe('pnpm oauth resource-server:register', () => {
  it('registers a resource server once and brings it to a new secret on the next call; the demo ignores it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'resource-server-'))
    const file = join(dir, 'secret')
    const register = (url: string) =>
      oauthOn(url, 'resource-server:register', '--client-id', 'energy-data', '--name', 'Energy', '--secret-file', file)
    const introspect = (secret: string) =>
      postForm(
        server.url,
        '/oauth/introspect',
        { token: 'cmpa_unknown' },
        { authorization: basic('energy-data', secret) },
      )
    writeFileSync(file, 'a'.repeat(40))
    expect(await register(server.database.url)).toMatchObject({
      status: 0,
      json: { resource_server: true, scopes: [] },
    })
    expect((await introspect('a'.repeat(40))).body).toEqual({ active: false })
    writeFileSync(file, 'b'.repeat(40))
    expect((await register(server.database.url)).status).toBe(0)
    expect((await introspect('a'.repeat(40))).status).toBe(401)
    expect((await introspect('b'.repeat(40))).status).toBe(200)
    writeFileSync(file, 'short')
    expect((await register(server.database.url)).status).toBe(2)

    // on an empty database the resource server the stack registers first does not stop the demo
    const empty = await createTestDatabase('oauth', oauthService.migrationsDir)
    try {
      writeFileSync(file, 'c'.repeat(40))
      expect((await register(empty.url)).status).toBe(0)
      expect((await oauthOn(empty.url, 'demo')).json).toMatchObject({ demo: 'prepared' })
    } finally {
      await empty.close()
    }
  })
})

describe('pnpm oauth browser-app:register', () => {
  it('registers a public, trusted, instance-wide application once and brings it to new redirect URIs on the next call; the demo ignores it', async () => {
    const register = (url: string, ...redirects: string[]) =>
      oauthOn(
        url,
        'browser-app:register',
        '--client-id',
        'energy-dashboard',
        '--name',
        'Energy dashboard',
        '--scopes',
        'read_energy',
        ...redirects.flatMap((r) => ['--redirect-uri', r]),
      )
    const first = await register(server.database.url, 'http://127.0.0.1:8000/dashboard')
    expect(first).toMatchObject({
      status: 0,
      json: {
        client_id: 'energy-dashboard',
        confidential: false,
        trusted: true,
        scopes: ['read_energy'],
        grant_types: ['authorization_code'],
        redirect_uris: ['http://127.0.0.1:8000/dashboard'],
      },
    })
    const second = await register(
      server.database.url,
      'https://energy.example/dashboard',
      'https://energy.example/docs/x',
    )
    expect(second.json).toMatchObject({
      id: first.json.id,
      redirect_uris: ['https://energy.example/dashboard', 'https://energy.example/docs/x'],
    })
    // the rules of every application: a plain-http redirect off loopback, no redirect at all
    const refused = await register(server.database.url, 'http://energy.example/dashboard')
    expect(refused.status).toBe(2)
    expect(refused.stderr).toContain('must use https')
    expect((await register(server.database.url)).status).toBe(2)

    const empty = await createTestDatabase('oauth', oauthService.migrationsDir)
    try {
      expect((await register(empty.url, 'http://127.0.0.1:8000/dashboard')).status).toBe(0)
      expect((await oauthOn(empty.url, 'demo')).json).toMatchObject({ demo: 'prepared' })
    } finally {
      await empty.close()
    }
  })
})

describe('pnpm oauth: the shared command-line shape', () => {
  it('a usage mistake exits 2 with the usage lines on stderr and nothing on stdout', async () => {
    for (const args of [[], ['nope'], ['user:create', '--username', 'x'], ['user:create', '--bogus'], ['pat:create']]) {
      const result = await oauth(...args)
      expect(result.status, args.join(' ')).toBe(2)
      expect(result.stderr).toContain('usage: pnpm oauth <command>')
      expect(result.stderr).toContain('app:update --client-id ID')
      expect(result.json).toEqual({})
    }
  })

  it('--help (or help, -h) prints the usage on stdout and exits 0; after a command, that command alone', async () => {
    for (const flag of ['--help', '-h', 'help']) {
      const result = await runServiceCommand(oauthService, [flag], { env: cliEnv(server.database.url) })
      expect(result.code, flag).toBe(0)
      expect(result.stdout).toContain('usage: pnpm oauth <command>')
      expect(result.stdout).toContain('app:update --client-id ID')
      expect(result.stderr).toBe('')
    }
    const one = await runServiceCommand(oauthService, ['pat:create', '--help'], { env: cliEnv(server.database.url) })
    expect(one.code).toBe(0)
    expect(one.stdout).toMatch(/^usage: pnpm oauth pat:create --username/)
    // run by npm (npm run oauth -- ...), the usage shows that form
    const byNpm = await runServiceCommand(oauthService, ['nope'], {
      env: { ...cliEnv(server.database.url), npm_config_user_agent: 'npm/10.8.2 node/v20.19.2 linux x64' },
    })
    expect(byNpm.code).toBe(2)
    expect(byNpm.stderr).toContain('usage: npm run oauth -- <command>\n  user:create')
  })

  it('an invalid value is a usage mistake; something in the way (a taken name) a failure', async () => {
    const invalid = await oauth('user:create', '--username', 'bad name', '--password', 'long enough password')
    expect(invalid.status).toBe(2)
    expect(invalid.stderr).toContain('error: username may hold letters, digits, _ . - only')
    const taken = await oauth('user:create', '--username', 'alice', '--password', 'long enough password')
    expect(taken.status).toBe(1)
    expect(taken.stderr.trim()).toBe('error: user alice already exists')
  })

  it('refuses to work on a database with pending migrations, saying how to apply them', async () => {
    const empty = await createTestDatabase<unknown>('oauthcli', mkdtempSync(join(tmpdir(), 'no-migrations-')))
    try {
      const result = await oauthOn(empty.url, 'pat:create', '--username', 'alice', '--name', 'x', '--scopes', 'api')
      expect(result.status).toBe(1)
      expect(result.stderr).toContain('migration(s) pending')
      expect(result.stderr).toContain('pnpm db:migrate')
    } finally {
      await empty.close()
    }
  })
})

const storedHash = async (username: string) =>
  (await server.db.selectFrom('users').select('password_hash').where('username', '=', username).executeTakeFirst())
    ?.password_hash

describe('pnpm oauth user:create: the password stays out of echoes and shell history', () => {
  it('reads it from standard input with --password-stdin (one final newline dropped)', async () => {
    const created = await oauthWithInput(
      server.database.url,
      'piped password 1\n',
      'user:create',
      '--username',
      'piper',
      '--password-stdin',
    )
    expect(created.stderr).toBe('')
    expect(created.status).toBe(0)
    expect(created.json.username).toBe('piper')
    expect(JSON.stringify(created.json)).not.toContain('piped password')
    expect(await verifyPassword(await storedHash('piper'), 'piped password 1')).toBe(true)

    const empty = await oauthWithInput(
      server.database.url,
      '',
      'user:create',
      '--username',
      'nobody',
      '--password-stdin',
    )
    expect(empty.status).toBe(2)
    expect(empty.stderr).toContain('standard input held no password')
  })

  it('without a terminal or --password-stdin, says how to give it (exit 2)', async () => {
    const result = await oauthWithInput(server.database.url, '', 'user:create', '--username', 'quiet')
    expect(result.status).toBe(2)
    expect(result.stderr).toContain('type it at the prompt (in a terminal) or pipe it with --password-stdin')
  })

  it('prompts twice in a terminal without echoing what is typed', async () => {
    // `script` gives the command a pseudo-terminal, as an operator's shell would
    const command = [process.execPath, ...NODE_ARGS, 'user:create', '--username', 'typist']
      .map((a) => `'${a}'`)
      .join(' ')
    const child = spawn('script', ['-qec', command, '/dev/null'], { env: cliEnv(server.database.url) })
    let output = ''
    const answered = new Set<string>()
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      for (const prompt of ['Password: ', 'Password again: ']) {
        if (output.includes(prompt) && !answered.has(prompt)) {
          answered.add(prompt)
          child.stdin.write('typed secret 42\r')
        }
      }
    })
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    child.stdin.end()
    expect(answered.size, output).toBe(2)
    expect(code, output).toBe(0)
    expect(output).not.toContain('typed secret')
    expect(output).toContain('"username": "typist"')
    expect(await verifyPassword(await storedHash('typist'), 'typed secret 42')).toBe(true)
  })

  it('still takes --password (discouraged: shell history and ps see it)', async () => {
    const result = await oauth('user:create', '--username', 'flagged', '--password', 'flag password 1')
    expect(result.status).toBe(0)
    expect(await verifyPassword(await storedHash('flagged'), 'flag password 1')).toBe(true)
  })
})

describe('registration-token:create (RFC 7591 3)', () => {
  it('prints an initial access token that registers one client, then no more', async () => {
    server.settings.registration = 'token'
    try {
      const created = await oauth('registration-token:create', '--name', 'partner', '--uses', '1', '--days', '2')
      expect(created.status).toBe(0)
      expect(created.json).toMatchObject({ uses: 1, registration: 'off' })
      const token = String(created.json.token)
      expect(token).toMatch(/^cmpi_/)
      const register = () =>
        fetch(`${server.url}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ redirect_uris: ['https://partner.example/cb'] }),
        })
      expect((await register()).status).toBe(201)
      expect((await register()).status).toBe(401)
      expect((await oauth('registration-token:create', '--name', 'x', '--uses', '0')).status).toBe(2)
    } finally {
      server.settings.registration = 'off'
    }
  })
})
