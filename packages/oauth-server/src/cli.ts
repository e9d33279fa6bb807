/**
 * `pnpm oauth <command>`: administration of the authorization server, in the shared command-line
 * shape (JSON on stdout; usage mistakes exit 2, failures 1). Changes to applications go through
 * the change mechanism, so running instances forget what they cached.
 */

import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import {
  type Command,
  commandFailed,
  openMigratedDatabase,
  parseFlags,
  programAsTyped,
  readSecret,
  requiredFlag,
  runCommandLine,
  secretFlags,
  usageError,
} from '@campus/shared'
import type { Kysely } from 'kysely'
import {
  AccountError,
  applicationProblems,
  createApplication,
  createPersonalAccessToken,
  createUser,
} from './accounts.ts'
import { type AuditEvent, applicationTarget, auditRow } from './audit.ts'
import { type Changes, changeMechanism } from './changes/commit.ts'
import { loadOAuthConfig, type OAuthSettings, settingsFromConfig } from './config.ts'
import type { Application, OAuthDB } from './db/schema.ts'
import {
  DEFAULT_GRANT_TYPES,
  DEVICE_CODE_GRANT,
  grantEnabled,
  ropcEnabled,
  withGrant,
  withRopc,
} from './domain/grant-types.ts'
import { s256 } from './domain/pkce.ts'
import { ADMINISTRATOR_SCOPES, parseScope } from './domain/scopes.ts'
import { digest, generateSecret } from './domain/secrets.ts'
import { otpauthUri } from './domain/totp.ts'
import {
  countApplications,
  findApplicationByUid,
  setApplicationGrantTypes,
  setApplicationRequiresPar,
  setApplicationTrusted,
  upsertFirstPartyApplication,
  upsertResourceServer,
} from './repositories/applications.ts'
import { insertAuditEvents } from './repositories/audit-events.ts'
import { insertInitialAccessToken } from './repositories/registrations.ts'
import type { Db } from './repositories/tokens.ts'
import { countUsers } from './repositories/users.ts'
import { oauthService } from './service.ts'

/** An administrator's change made on the command line, recorded as it happens. */
const record = (db: Db, event: AuditEvent) => insertAuditEvents(db, [auditRow(event)])

interface Context {
  db: Kysely<OAuthDB>
  settings: OAuthSettings
  changes: Changes
}

/** The account rules' refusal: a mistake in the flags (2), or something in the way (1). */
async function accounts<T>(work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (error) {
    if (!(error instanceof AccountError)) throw error
    throw error.conflict ? commandFailed(error.message) : usageError(error.message)
  }
}

const commands: Record<string, Command<Context>> = {
  'user:create': {
    usage:
      'user:create --username NAME [--password-stdin] [--email E] [--name N] [--admin] [--with-2fa]  (password: prompted, or piped with --password-stdin)',
    async run({ db, settings }, args) {
      const { values: v } = parseFlags(args, {
        username: { type: 'string' },
        ...secretFlags('password'),
        email: { type: 'string' },
        name: { type: 'string' },
        admin: { type: 'boolean' },
        'with-2fa': { type: 'boolean' },
      })
      const username = requiredFlag(v.username, 'username')
      const password = await readSecret(v, 'password')
      const { user, otpSecret } = await accounts(
        createUser(db, {
          username,
          password,
          email: v.email,
          name: v.name,
          admin: v.admin === true,
          with2fa: v['with-2fa'] === true,
          secretKey: settings.secretKey,
        }),
      )
      await record(db, {
        event: 'user_created',
        author: 'command_line',
        entity: user,
        message: `Created the ${user.admin ? 'administrator' : 'user'} ${user.username}`,
      })
      return {
        id: user.id,
        username: user.username,
        name: user.name,
        email: user.email,
        admin: user.admin,
        two_factor_enabled: Boolean(otpSecret),
        ...(otpSecret
          ? { otp_secret: otpSecret, otpauth_uri: otpauthUri(otpSecret, user.username, new URL(settings.issuer).host) }
          : {}),
      }
    },
  },

  'app:create': {
    usage:
      'app:create --name NAME --redirect-uri URI... --scopes "api read_user" [--public] [--trusted] [--grants LIST] [--ropc] [--client-credentials] [--device-code]',
    async run({ db }, args) {
      const { values: v } = parseFlags(args, {
        name: { type: 'string' },
        'redirect-uri': { type: 'string', multiple: true },
        scopes: { type: 'string' },
        public: { type: 'boolean' },
        trusted: { type: 'boolean' },
        grants: { type: 'string' },
        ropc: { type: 'boolean' },
        'client-credentials': { type: 'boolean' },
        'device-code': { type: 'boolean' },
      })
      let grants = typeof v.grants === 'string' ? v.grants.split(/[ ,]+/).filter(Boolean) : undefined
      // the password grant only when asked for (RFC 9700 2.4): --ropc, or a --grants list naming it
      if (typeof v.ropc === 'boolean' || grants === undefined)
        grants = withRopc(grants ?? DEFAULT_GRANT_TYPES, v.ropc === true)
      if (typeof v['client-credentials'] === 'boolean') {
        grants = withGrant(grants ?? DEFAULT_GRANT_TYPES, 'client_credentials', v['client-credentials'])
      }
      if (typeof v['device-code'] === 'boolean') {
        grants = withGrant(grants ?? DEFAULT_GRANT_TYPES, DEVICE_CODE_GRANT, v['device-code'])
      }
      const { application, secret } = await accounts(
        createApplication(db, {
          name: requiredFlag(v.name, 'name'),
          redirectUris: v['redirect-uri'] ?? [],
          scopes: parseScope(requiredFlag(v.scopes, 'scopes')),
          confidential: v.public !== true,
          trusted: v.trusted === true,
          grantTypes: grants,
        }),
      )
      await record(db, {
        event: 'oauth_application_created',
        author: 'command_line',
        target: applicationTarget(application),
        message: `Created the application ${application.name}`,
      })
      return {
        ...applicationSummary(application),
        client_secret: secret,
        note: secret ? 'The secret is shown only now; only its digest is stored.' : 'Public client: PKCE is required.',
      }
    },
  },

  'app:update': {
    usage:
      'app:update --client-id ID [--ropc | --no-ropc] [--client-credentials | --no-client-credentials] [--device-code | --no-device-code] [--trusted | --no-trusted] [--par | --no-par]',
    async run({ changes }, args) {
      const { values: v } = parseFlags(args, {
        'client-id': { type: 'string' },
        ropc: { type: 'boolean' },
        'client-credentials': { type: 'boolean' },
        'device-code': { type: 'boolean' },
        trusted: { type: 'boolean' },
        par: { type: 'boolean' },
      })
      const uid = requiredFlag(v['client-id'], 'client-id')
      const clientCredentials = v['client-credentials']
      const deviceCode = v['device-code']
      if ([v.ropc, v.trusted, v.par, clientCredentials, deviceCode].every((flag) => typeof flag !== 'boolean')) {
        throw usageError(
          'nothing to change: give --ropc / --no-ropc, --client-credentials / --no-client-credentials, --device-code / --no-device-code, --trusted / --no-trusted and/or --par / --no-par',
        )
      }
      const application = await changes.commit(async (trx) => {
        const found = await findApplicationByUid(trx, uid)
        if (!found) throw commandFailed(`no application with client id ${uid}`)
        if (typeof v.trusted === 'boolean') {
          if ((await setApplicationTrusted(trx, found.id, v.trusted)) === 'owned') {
            throw commandFailed('only instance-wide applications can be trusted: a user owns this one')
          }
          await record(trx, {
            event: v.trusted ? 'oauth_application_trusted' : 'oauth_application_untrusted',
            author: 'command_line',
            target: applicationTarget(found),
            message: v.trusted ? 'Trusted an application: no consent page' : 'Stopped trusting an application',
          })
        }
        let grants = found.grant_types
        if (typeof v.ropc === 'boolean') grants = withRopc(grants, v.ropc)
        if (typeof clientCredentials === 'boolean') {
          if (clientCredentials && !found.confidential) {
            throw commandFailed('client credentials are for confidential applications only (RFC 6749 4.4)')
          }
          grants = withGrant(grants, 'client_credentials', clientCredentials)
        }
        if (typeof deviceCode === 'boolean') grants = withGrant(grants, DEVICE_CODE_GRANT, deviceCode)
        await setApplicationGrantTypes(trx, uid, grants)
        if (typeof v.par === 'boolean') await setApplicationRequiresPar(trx, found.id, v.par)
        return (await findApplicationByUid(trx, uid)) as Application
      })
      return applicationSummary(application)
    },
  },

  'resource-server:register': {
    usage: 'resource-server:register --client-id ID --name NAME --secret-file FILE',
    async run({ changes }, args) {
      const { values: v } = parseFlags(args, {
        'client-id': { type: 'string' },
        name: { type: 'string' },
        'secret-file': { type: 'string' },
      })
      const uid = requiredFlag(v['client-id'], 'client-id')
      const name = requiredFlag(v.name, 'name')
      const file = requiredFlag(v['secret-file'], 'secret-file')
      // the secret travels in a file (as container secrets do), never on a command line others can read
      let secret: string
      try {
        secret = readFileSync(file, 'utf8').trim()
      } catch (error) {
        throw commandFailed(`cannot read the secret file ${file}: ${(error as Error).message}`)
      }
      if (secret.length < 32) throw usageError('the secret must be at least 32 characters')
      const application = await changes.commit((trx) =>
        upsertResourceServer(trx, { uid, name, secretDigest: digest(secret) }),
      )
      return { ...applicationSummary(application), resource_server: application.resource_server }
    },
  },

  'browser-app:register': {
    usage:
      'browser-app:register --client-id ID --name NAME --redirect-uri URI... --scopes "read_energy" [--device-code]',
    async run({ changes }, args) {
      const { values: v } = parseFlags(args, {
        'client-id': { type: 'string' },
        name: { type: 'string' },
        'redirect-uri': { type: 'string', multiple: true },
        scopes: { type: 'string' },
        'device-code': { type: 'boolean' },
      })
      const input = {
        uid: requiredFlag(v['client-id'], 'client-id'),
        name: requiredFlag(v.name, 'name'),
        redirectUris: v['redirect-uri'] ?? [],
        scopes: parseScope(requiredFlag(v.scopes, 'scopes')),
        // a command line on the same side signs in by the device flow (RFC 8628)
        grantTypes: v['device-code'] ? ['authorization_code', DEVICE_CODE_GRANT] : ['authorization_code'],
      }
      const problems = applicationProblems({ ...input, confidential: false, trusted: true })
      if (problems.length) throw usageError(problems.map((p) => p.message).join('; '))
      const application = await changes.commit((trx) => upsertFirstPartyApplication(trx, input))
      return applicationSummary(application)
    },
  },

  'pat:create': {
    usage: 'pat:create --username NAME --name TOKEN_NAME --scopes "api" [--expires YYYY-MM-DD]',
    async run({ db }, args) {
      const { values: v } = parseFlags(args, {
        username: { type: 'string' },
        name: { type: 'string' },
        scopes: { type: 'string' },
        expires: { type: 'string' },
      })
      const created = await accounts(
        createPersonalAccessToken(db, {
          username: requiredFlag(v.username, 'username'),
          name: requiredFlag(v.name, 'name'),
          scopes: parseScope(requiredFlag(v.scopes, 'scopes')),
          expiresAt: v.expires ?? null,
          // the operator acts as an administrator
          administratorScopes: ADMINISTRATOR_SCOPES,
        }),
      )
      return {
        id: created.id,
        token: created.token,
        expires_at: created.expiresAt,
        note: 'Shown only now. Send it as `PRIVATE-TOKEN: <token>` or `Authorization: Bearer <token>`.',
      }
    },
  },

  'registration-token:create': {
    usage:
      'registration-token:create --name NAME [--uses N] [--days D]  (an initial access token for /oauth/register, RFC 7591 3; default: 1 use, 7 days)',
    async run({ db, settings }, args) {
      const { values: v } = parseFlags(args, {
        name: { type: 'string' },
        uses: { type: 'string' },
        days: { type: 'string' },
      })
      const name = requiredFlag(v.name, 'name')
      const uses = Number(v.uses ?? 1)
      const days = Number(v.days ?? 7)
      if (!Number.isInteger(uses) || uses < 1 || uses > 10_000)
        throw usageError('--uses must be a whole number from 1 to 10000')
      if (!Number.isInteger(days) || days < 1 || days > 365)
        throw usageError('--days must be a whole number from 1 to 365')
      const token = generateSecret('initialAccessToken')
      const row = await insertInitialAccessToken(db, {
        digest: digest(token),
        name,
        uses,
        expiresAt: new Date(Date.now() + days * 86_400_000),
      })
      await record(db, {
        event: 'registration_token_created',
        author: 'command_line',
        target: { type: 'InitialAccessToken', id: row.id, details: name },
        message: `Issued the initial access token ${name} (${uses} uses, ${days} days)`,
      })
      return {
        id: row.id,
        token,
        uses,
        expires_at: row.expires_at.toISOString(),
        registration: settings.registration ?? 'off',
        note: 'Shown only now. A client registers with it as `Authorization: Bearer <token>` at POST /oauth/register (OAUTH_REGISTRATION=token or open).',
      }
    },
  },

  demo: {
    usage: 'demo     (once: the demo user and the demo client that `npm start` prepares, their secrets shown)',
    async run({ db, settings: { issuer } }, args) {
      parseFlags(args, {})
      const redirectUri = 'http://127.0.0.1:8765/callback'
      if ((await countUsers(db)) > 0 || (await countApplications(db)) > 0) {
        return {
          demo: `already prepared (${programAsTyped('pnpm demo').replace(/ --$/, '')} shows the demo password and client again)`,
          try: `${programAsTyped('pnpm oauth')} user:create / app:create make new ones`,
        }
      }
      const password = randomBytes(9).toString('base64url')
      const { user } = await createUser(db, {
        username: 'demo',
        password,
        name: 'Demo User',
        email: 'demo@example.org',
      })
      const { application } = await createApplication(db, {
        name: 'Demo application',
        redirectUris: [redirectUri],
        scopes: ['api', 'read_api', 'read_user', 'read_energy'],
        confidential: false,
      })
      // a fixed verifier for the walkthrough only; real clients make a new one per request
      const verifier = randomBytes(32).toString('base64url')
      const authorize = new URL(`${issuer}/oauth/authorize`)
      authorize.search = new URLSearchParams({
        client_id: application.uid,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: 'read_user read_energy',
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
          '5. The same token reads the energy data API of the stack: curl -s -H "Authorization: Bearer ACCESS_TOKEN" http://ENERGY_HOST:ENERGY_PORT/data/pv',
        ],
        pages: `${issuer}/profile/applications (register applications, see and revoke authorizations), /profile/personal_access_tokens, /profile/two_factor_auth`,
      }
    },
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
    client_credentials_enabled: grantEnabled(application, 'client_credentials'),
    device_code_enabled: grantEnabled(application, DEVICE_CODE_GRANT),
    require_pushed_authorization_requests: application.require_pushed_authorization_requests,
  }
}

runCommandLine({
  program: 'pnpm oauth',
  commands,
  async open() {
    const config = loadOAuthConfig()
    const database = await openMigratedDatabase<OAuthDB>(oauthService, config)
    // no caches of its own; every change is announced to the running instances
    const changes = changeMechanism(database.db, { cacheSeconds: 0, notify: true })
    return {
      context: { db: database.db, settings: settingsFromConfig(config), changes },
      close: () => database.close(),
    }
  },
})
