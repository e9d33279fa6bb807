/** /profile/applications: register, show, edit, renew, delete; authorized applications and revoke. */

import type { FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import Type from 'typebox'
import { administratorScopesOf, applicationProblems, createApplication, sentence } from '../accounts.ts'
import { applicationTarget, byUser } from '../audit.ts'
import type { Application, OAuthDB } from '../db/schema.ts'
import {
  DEFAULT_GRANT_TYPES,
  DEVICE_CODE_GRANT,
  grantEnabled,
  ropcEnabled,
  withGrant,
  withRopc,
} from '../domain/grant-types.ts'
import { digest, generateSecret } from '../domain/secrets.ts'
import { routePlugin } from '../oauth-app.ts'
import { type Account, sendAccountPage } from '../pages/account.ts'
import { accountGet, accountPost, notFound } from '../pages/account-routes.ts'
import { field, fieldList, IdParams, pathId } from '../pages/forms.ts'
import { setFlash, takeFlash } from '../pages/session.ts'
import {
  type ApplicationForm,
  applicationPage,
  applicationsPage,
  deleteApplicationPage,
  EMPTY_FORM,
  editApplicationPage,
} from '../pages/views/applications.ts'
import {
  deleteOwnedApplication,
  findApplicationById,
  instanceApplicationNamed,
  listApplicationsOwnedBy,
  lockApplication,
  updateOwnedApplication,
} from '../repositories/applications.ts'
import { listConsents, revokeAuthorization } from '../repositories/consents.ts'
import { listHeldTokens, revokeHeldToken } from '../repositories/tokens.ts'
import { Redirect } from '../schemas/pages.ts'

const FormBody = {
  name: Type.Optional(Type.String({ description: 'Application name' })),
  redirect_uris: Type.Optional(Type.String({ description: 'Redirect URIs, one per line' })),
  confidential: Type.Optional(Type.String({ description: 'Present (any value) for a confidential client' })),
  scopes: Type.Optional(Type.Array(Type.String(), { description: 'Scopes (checkboxes)' })),
  password_grant: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'Password grant (ROPC) allowed: "0" (hidden field), then "1" when the box is checked; the last value counts, none keeps the current setting (new applications: allowed)',
    }),
  ),
  client_credentials: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'Client credentials allowed (confidential applications only): as password_grant; new applications: not allowed',
    }),
  ),
  device_grant: Type.Optional(
    Type.Array(Type.String(), {
      description: 'Device authorization grant (RFC 8628) allowed: as password_grant; new applications: not allowed',
    }),
  ),
}

/** A grant switch's box: a hidden "0" precedes the checkbox's "1"; not sent at all, undefined. */
function readSwitch(
  body: unknown,
  name: 'password_grant' | 'client_credentials' | 'device_grant',
): boolean | undefined {
  const values = fieldList(body, name)
  return values.length ? values[values.length - 1] === '1' : undefined
}

/** The grant list the form asks for, from the application's current one (or a new one's defaults). */
function grantsOf(form: ApplicationForm, current: readonly string[] = DEFAULT_GRANT_TYPES): string[] {
  const grants = withGrant(withRopc(current, form.passwordGrant), 'client_credentials', form.clientCredentials)
  return withGrant(grants, DEVICE_CODE_GRANT, form.deviceGrant)
}

function readForm(request: FastifyRequest, current?: Application): ApplicationForm {
  return {
    name: field(request.body, 'name') ?? '',
    redirectUris: field(request.body, 'redirect_uris') ?? '',
    confidential: field(request.body, 'confidential') !== undefined,
    scopes: fieldList(request.body, 'scopes'),
    // off for a new application unless asked for (EMPTY_FORM)
    passwordGrant:
      readSwitch(request.body, 'password_grant') ?? (current ? ropcEnabled(current) : EMPTY_FORM.passwordGrant),
    clientCredentials:
      readSwitch(request.body, 'client_credentials') ?? (current ? grantEnabled(current, 'client_credentials') : false),
    deviceGrant:
      readSwitch(request.body, 'device_grant') ?? (current ? grantEnabled(current, DEVICE_CODE_GRANT) : false),
  }
}

interface Checked {
  errors: string[]
  invalid: Set<string>
  uris: string[]
}

/**
 * The form against the application rules: its errors as sentences, which fields to mark, the
 * redirect URIs. A user's application may not take the name of one of the instance's own, which
 * the consent pages would show in its place.
 */
async function check(
  db: Kysely<OAuthDB>,
  form: ApplicationForm,
  owner: { ownerId: number; administratorScopes: readonly string[] },
): Promise<Checked> {
  const uris = [
    ...new Set(
      form.redirectUris
        .split(/\r?\n/)
        .map((u) => u.trim())
        .filter(Boolean),
    ),
  ]
  const problems = applicationProblems({
    name: form.name,
    redirectUris: uris,
    scopes: form.scopes,
    confidential: form.confidential,
    grantTypes: grantsOf(form),
    ...owner,
  })
  if (form.name.trim() && (await instanceApplicationNamed(db, form.name))) {
    problems.push({ field: 'name', message: 'name is taken by an application of this instance' })
  }
  return { errors: problems.map(sentence), invalid: new Set(problems.map((p) => p.field)), uris }
}

const formOf = (a: Application): ApplicationForm => ({
  name: a.name,
  redirectUris: a.redirect_uris.join('\n'),
  confidential: a.confidential,
  scopes: a.scopes,
  passwordGrant: ropcEnabled(a),
  clientCredentials: grantEnabled(a, 'client_credentials'),
  deviceGrant: grantEnabled(a, DEVICE_CODE_GRANT),
})

export const profileApplicationRoutes = routePlugin('oauth-profile-applications-routes', (app) => {
  const { db } = app

  /** The applications page: the user's own applications, those they authorized, and the form. */
  async function listPage(
    account: Account,
    state: { form: ApplicationForm; errors: string[]; invalid: Set<string>; notice?: string | undefined },
  ) {
    return applicationsPage({
      csrf: account.csrf,
      applications: await listApplicationsOwnedBy(db, account.user.id),
      authorized: await listConsents(db, account.user.id),
      anonymous: await listHeldTokens(db, { userId: account.user.id }),
      ...state,
    })
  }

  async function owned(request: FastifyRequest, userId: number): Promise<Application | undefined> {
    const id = pathId(request)
    const application = id === undefined ? undefined : await findApplicationById(db, id)
    return application?.owner_id === userId ? application : undefined
  }

  app.get(
    '/profile',
    { schema: { tags: ['Pages'], summary: 'Account home', response: { 302: Redirect('To the applications page') } } },
    async (_request, reply) => reply.redirect('/profile/applications', 302),
  )

  accountGet(app, '/profile/applications', { summary: 'Applications page' }, async (_request, reply, account) => {
    const flash = await takeFlash(app, account.session)
    const page = await listPage(account, { form: EMPTY_FORM, errors: [], invalid: new Set(), notice: flash.notice })
    return sendAccountPage(reply, account, 'Applications', page)
  })

  accountPost(
    app,
    '/profile/applications',
    { summary: 'Register an application', body: FormBody, unprocessable: true },
    async (request, reply, account) => {
      const form = readForm(request)
      const owner = { ownerId: account.user.id, administratorScopes: administratorScopesOf(account.user) }
      const checked = await check(db, form, owner)
      if (checked.errors.length) {
        const page = await listPage(account, { form, ...checked })
        return sendAccountPage(reply, account, 'Applications', page, { status: 422 })
      }
      const { application, secret } = await createApplication(db, {
        name: form.name,
        redirectUris: checked.uris,
        scopes: form.scopes,
        confidential: form.confidential,
        grantTypes: grantsOf(form),
        ...owner,
      })
      await app.audit.record({
        event: 'oauth_application_created',
        ...byUser(account.user, request.ip),
        target: applicationTarget(application),
        message: `Created the application ${application.name}`,
      })
      await setFlash(app, account.session, {
        notice: 'The application was created.',
        ...(secret ? { secret } : {}),
      })
      return reply.redirect(`/profile/applications/${application.id}`, 303)
    },
  )

  accountGet(
    app,
    '/profile/applications/:id',
    { summary: 'One application', params: IdParams },
    async (request, reply, account) => {
      const application = await owned(request, account.user.id)
      if (!application) return notFound(reply)
      const flash = await takeFlash(app, account.session)
      const page = applicationPage({
        csrf: account.csrf,
        application,
        tokens: await listHeldTokens(db, { applicationId: application.id }),
        secret: flash.secret,
        notice: flash.notice,
      })
      return sendAccountPage(reply, account, application.name, page, { script: true })
    },
  )

  accountGet(
    app,
    '/profile/applications/:id/edit',
    { summary: 'Edit form of an application', params: IdParams },
    async (request, reply, account) => {
      const application = await owned(request, account.user.id)
      if (!application) return notFound(reply)
      const page = editApplicationPage({
        csrf: account.csrf,
        application,
        form: formOf(application),
        errors: [],
        invalid: new Set(),
      })
      return sendAccountPage(reply, account, 'Edit application', page)
    },
  )

  accountPost(
    app,
    '/profile/applications/:id',
    { summary: 'Change an application', params: IdParams, body: FormBody, unprocessable: true },
    async (request, reply, account) => {
      const application = await owned(request, account.user.id)
      if (!application) return notFound(reply)
      const form = readForm(request, application)
      // a user keeps what an administrator allowed the application; an administrator allows
      const administratorScopes = administratorScopesOf(account.user, application.administrator_scopes)
      const checked = await check(db, form, { ownerId: account.user.id, administratorScopes })
      if (checked.errors.length) {
        const page = editApplicationPage({ csrf: account.csrf, application, form, ...checked })
        return sendAccountPage(reply, account, 'Edit application', page, { status: 422 })
      }
      // becoming confidential needs a secret; becoming public drops it
      const secret = form.confidential && !application.confidential ? generateSecret('clientSecret') : undefined
      await app.changes.commit((trx) =>
        updateOwnedApplication(trx, application.id, account.user.id, {
          name: form.name.trim(),
          redirect_uris: checked.uris,
          scopes: form.scopes,
          administrator_scopes: form.scopes.filter((s) => administratorScopes.includes(s)),
          confidential: form.confidential,
          secret_digest: form.confidential ? (secret ? digest(secret) : application.secret_digest) : null,
          grant_types: grantsOf(form, application.grant_types),
        }),
      )
      await setFlash(app, account.session, {
        notice: 'The application was updated.',
        ...(secret ? { secret } : {}),
      })
      return reply.redirect(`/profile/applications/${application.id}`, 303)
    },
  )

  accountPost(
    app,
    '/profile/applications/:id/renew',
    { summary: 'Renew the secret (the old one stops working at once)', params: IdParams },
    async (request, reply, account) => {
      const application = await owned(request, account.user.id)
      if (!application?.confidential) return notFound(reply)
      const secret = generateSecret('clientSecret')
      // Renewals of one application run one at a time, each storing its secret and the notice
      // that shows it together: after a double-click the secret shown is the one in force.
      await app.changes.commit(async (trx) => {
        await lockApplication(trx, application.id)
        await updateOwnedApplication(trx, application.id, account.user.id, { secret_digest: digest(secret) })
        await setFlash(app, account.session, { notice: 'The secret was renewed.', secret }, trx)
        await app.audit.record(
          {
            event: 'oauth_application_secret_renewed',
            ...byUser(account.user, request.ip),
            target: applicationTarget(application),
            message: `Renewed the secret of ${application.name}`,
          },
          trx,
        )
      })
      return reply.redirect(`/profile/applications/${application.id}`, 303)
    },
  )

  accountGet(
    app,
    '/profile/applications/:id/delete',
    { summary: 'Confirm deleting an application', params: IdParams },
    async (request, reply, account) => {
      const application = await owned(request, account.user.id)
      if (!application) return notFound(reply)
      return sendAccountPage(
        reply,
        account,
        'Delete application',
        deleteApplicationPage({ csrf: account.csrf, application }),
      )
    },
  )

  accountPost(
    app,
    '/profile/applications/:id/delete',
    { summary: 'Delete an application and its tokens', params: IdParams },
    async (request, reply, account) => {
      const application = await owned(request, account.user.id)
      if (!application) return notFound(reply)
      await app.changes.commit((trx) => deleteOwnedApplication(trx, application.id, account.user.id))
      await app.audit.record({
        event: 'oauth_application_deleted',
        ...byUser(account.user, request.ip),
        target: applicationTarget(application),
        message: `Deleted the application ${application.name}`,
      })
      await setFlash(app, account.session, { notice: `The application ${application.name} was deleted.` })
      return reply.redirect('/profile/applications', 303)
    },
  )

  accountPost(
    app,
    '/profile/applications/:id/tokens/:token/revoke',
    {
      summary: "Revoke one of the application's own tokens (client credentials)",
      params: Type.Object({ id: IdParams.properties.id, token: IdParams.properties.id }),
    },
    async (request, reply, account) => {
      const application = await owned(request, account.user.id)
      const token = Number((request.params as { token: string }).token)
      const revoked =
        application !== undefined &&
        (await app.changes.commit((trx) => revokeHeldToken(trx, { applicationId: application.id }, token)))
      if (!revoked) return notFound(reply)
      await app.audit.record({
        event: 'oauth_token_revoked',
        ...byUser(account.user, request.ip),
        target: { type: 'OauthAccessToken', id: token, details: `a token of ${application.name}` },
        message: `Revoked a client credentials token of ${application.name}`,
      })
      await setFlash(app, account.session, { notice: 'The token was revoked.' })
      return reply.redirect(`/profile/applications/${application.id}`, 303)
    },
  )

  accountPost(
    app,
    '/profile/applications/authorized/:id/revoke',
    { summary: 'Revoke an authorization: the consent and every token of that application for you', params: IdParams },
    async (request, reply, account) => {
      const id = pathId(request)
      if (id === undefined) return notFound(reply)
      await app.changes.commit((trx) => revokeAuthorization(trx, account.user.id, id))
      await app.audit.record({
        event: 'oauth_consent_revoked',
        ...byUser(account.user, request.ip),
        target: { type: 'Doorkeeper::Application', id },
        message: 'Revoked the authorization of an application, and its tokens',
      })
      await setFlash(app, account.session, { notice: 'The authorization was revoked.' })
      return reply.redirect('/profile/applications', 303)
    },
  )

  accountPost(
    app,
    '/profile/applications/authorized/tokens/:id/revoke',
    { summary: 'Revoke a token of a password grant made without an application', params: IdParams },
    async (request, reply, account) => {
      const id = pathId(request)
      const revoked =
        id !== undefined && (await app.changes.commit((trx) => revokeHeldToken(trx, { userId: account.user.id }, id)))
      if (!revoked) return notFound(reply)
      await app.audit.record({
        event: 'oauth_token_revoked',
        ...byUser(account.user, request.ip),
        target: { type: 'OauthAccessToken', id: id as number },
        message: 'Revoked a token of a password grant made without an application',
      })
      await setFlash(app, account.session, { notice: 'The token was revoked.' })
      return reply.redirect('/profile/applications', 303)
    },
  )
})
