/** `pnpm oauth <command>`: administration of the authorization server. Prints JSON on stdout. */
import { randomBytes, randomUUID } from 'node:crypto'
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util'
import { openServiceDatabase, runMain } from '@campus/shared'
import type { Kysely } from 'kysely'
import { AdminError, createApplication, createPersonalAccessToken, createUser, parseScopes } from './admin.ts'
import { notifyCacheChange } from './cache-invalidation.ts'
import { loadOAuthConfig, type OAuthSettings, settingsFromConfig } from './config.ts'
import type { Application, OAuthDB } from './db/schema.ts'
import { GRANT_TYPES, ropcEnabled, withRopc } from './domain/grant-types.ts'
import { s256 } from './domain/pkce.ts'
import { otpauthUri } from './domain/totp.ts'
import {
  countApplications,
  findApplicationByUid,
  setApplicationGrantTypes,
  setApplicationTrusted,
} from './repositories/applications.ts'
import { countUsers } from './repositories/users.ts'

type Command = (db: Kysely<OAuthDB>, args: string[], settings: OAuthSettings) => Promise<unknown>

type Flags = Record<string, string | boolean | string[] | boolean[] | undefined>

function flags(args: string[], options: ParseArgsOptionsConfig): Flags {
  try {
    // --no-<flag> turns a boolean off
    return parseArgs({ args, options, strict: true, allowPositionals: false, allowNegative: true }).values as Flags
  } catch (error) {
    throw new AdminError((error as Error).message)
  }
}

function required(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw new AdminError(`--${name} is required`)
  return value
}

const commands: Record<string, Command> = {
  'user:create': async (db, args, { issuer, secretKey }) => {
    const v = flags(args, {
      username: { type: 'string' },
      password: { type: 'string' },
      email: { type: 'string' },
      name: { type: 'string' },
      admin: { type: 'boolean' },
      'with-2fa': { type: 'boolean' },
    })
    const { user, otpSecret } = await createUser(db, {
      username: required(v.username, 'username'),
      password: required(v.password, 'password'),
      email: v.email as string | undefined,
      name: v.name as string | undefined,
      admin: v.admin === true,
      with2fa: v['with-2fa'] === true,
      secretKey,
    })
    return {
      id: user.id,
      username: user.username,
      name: user.name,
      email: user.email,
      admin: user.admin,
      two_factor_enabled: Boolean(otpSecret),
      ...(otpSecret
        ? { otp_secret: otpSecret, otpauth_uri: otpauthUri(otpSecret, user.username, new URL(issuer).host) }
        : {}),
    }
  },

  'app:create': async (db, args) => {
    const v = flags(args, {
      name: { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      scopes: { type: 'string' },
      public: { type: 'boolean' },
      trusted: { type: 'boolean' },
      grants: { type: 'string' },
      ropc: { type: 'boolean' },
    })
    const grants = typeof v.grants === 'string' ? v.grants.split(/[ ,]+/).filter(Boolean) : undefined
    const { application, secret } = await createApplication(db, {
      name: required(v.name, 'name'),
      redirectUris: (v['redirect-uri'] as string[] | undefined) ?? [],
      scopes: parseScopes(required(v.scopes, 'scopes')),
      confidential: v.public !== true,
      trusted: v.trusted === true,
      grantTypes: typeof v.ropc === 'boolean' ? withRopc(grants ?? GRANT_TYPES, v.ropc) : grants,
    })
    return {
      ...applicationSummary(application),
      client_secret: secret,
      note: secret ? 'The secret is shown only now; only its digest is stored.' : 'Public client: PKCE is required.',
    }
  },

  'app:update': async (db, args) => {
    const v = flags(args, {
      'client-id': { type: 'string' },
      ropc: { type: 'boolean' },
      trusted: { type: 'boolean' },
    })
    const uid = required(v['client-id'], 'client-id')
    if (typeof v.ropc !== 'boolean' && typeof v.trusted !== 'boolean') {
      throw new AdminError('nothing to change: give --ropc / --no-ropc and/or --trusted / --no-trusted')
    }
    // one transaction that also tells every running instance to forget its cached clients
    const application = await db.transaction().execute(async (trx) => {
      const found = await findApplicationByUid(trx, uid)
      if (!found) throw new AdminError(`no application with client id ${uid}`)
      if (typeof v.trusted === 'boolean' && (await setApplicationTrusted(trx, found.id, v.trusted)) === 'owned') {
        throw new AdminError('only instance-wide applications can be trusted: a user owns this one')
      }
      if (typeof v.ropc === 'boolean') await setApplicationGrantTypes(trx, uid, withRopc(found.grant_types, v.ropc))
      await notifyCacheChange(trx, randomUUID())
      return (await findApplicationByUid(trx, uid)) as Application
    })
    return applicationSummary(application)
  },

  'pat:create': async (db, args) => {
    const v = flags(args, {
      username: { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
      expires: { type: 'string' },
    })
    const created = await createPersonalAccessToken(db, {
      username: required(v.username, 'username'),
      name: required(v.name, 'name'),
      scopes: parseScopes(required(v.scopes, 'scopes')),
      expiresAt: (v.expires as string | undefined) ?? null,
    })
    return {
      id: created.id,
      token: created.token,
      expires_at: created.expiresAt,
      note: 'Shown only now. Send it as `PRIVATE-TOKEN: <token>` or `Authorization: Bearer <token>`.',
    }
  },

  demo: async (db, _args, { issuer }) => {
    const redirectUri = 'http://127.0.0.1:8765/callback'
    if ((await countUsers(db)) > 0 || (await countApplications(db)) > 0) {
      return {
        demo: 'already prepared (the demo password and client were printed on the first start)',
        try: 'pnpm oauth user:create / app:create make new ones',
      }
    }
    const password = randomBytes(9).toString('base64url')
    const { user } = await createUser(db, { username: 'demo', password, name: 'Demo User', email: 'demo@example.org' })
    const { application } = await createApplication(db, {
      name: 'Demo application',
      redirectUris: [redirectUri],
      scopes: ['api', 'read_api', 'read_user'],
      confidential: false,
    })
    // a fixed verifier for the walkthrough only; real clients make a new one per request
    const verifier = randomBytes(32).toString('base64url')
    const authorize = new URL(`${issuer}/oauth/authorize`)
    authorize.search = new URLSearchParams({
      client_id: application.uid,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'read_user',
      state: 'demo-state',
      code_challenge: s256(verifier),
      code_challenge_method: 'S256',
    }).toString()
    return {
      demo: 'prepared',
      user: { username: user.username, password },
      application: { name: application.name, client_id: application.uid, redirect_uri: redirectUri, public: true },
      steps: [
        `1. Open ${authorize.toString()}`,
        `2. Sign in as demo / ${password} and approve; the browser lands on ${redirectUri}?code=...&state=demo-state&iss=... (nothing listens there: copy the code from the address bar).`,
        `3. curl -s ${issuer}/oauth/token -d grant_type=authorization_code -d client_id=${application.uid} -d redirect_uri=${redirectUri} -d code_verifier=${verifier} -d code=CODE`,
        `4. curl -s -H "Authorization: Bearer ACCESS_TOKEN" ${issuer}/api/v4/user`,
      ],
      pages: `${issuer}/profile/applications (register applications, see and revoke authorizations), /profile/personal_access_tokens, /profile/two_factor_auth`,
    }
  },
}

function applicationSummary(application: Application) {
  return {
    id: application.id,
    name: application.name,
    client_id: application.uid,
    redirect_uris: application.redirect_uris,
    scopes: application.scopes,
    confidential: application.confidential,
    trusted: application.trusted,
    grant_types: application.grant_types,
    ropc_enabled: ropcEnabled(application),
  }
}

runMain(async () => {
  const [name, ...args] = process.argv.slice(2)
  const command = name ? commands[name] : undefined
  if (!command) throw new Error(`usage: pnpm oauth <${Object.keys(commands).join('|')}> [--flags]`)
  const config = loadOAuthConfig()
  const database = await openServiceDatabase<OAuthDB>({
    service: 'oauth',
    url: config.OAUTH_DATABASE_URL,
    dataDir: config.DATA_DIR,
  })
  try {
    const result = await command(database.db, args, settingsFromConfig(config))
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
  } finally {
    await database.close()
  }
})
