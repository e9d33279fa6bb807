/** /profile/personal_access_tokens: create (value shown once), list, revoke. */

import Type from 'typebox'
import { administratorScopesOf, createPersonalAccessToken, sentence, tokenProblems } from '../accounts.ts'
import { byUser } from '../audit.ts'
import { routePlugin } from '../oauth-app.ts'
import { sendAccountPage } from '../pages/account.ts'
import { accountGet, accountPost, notFound } from '../pages/account-routes.ts'
import { field, fieldList, IdParams, pathId } from '../pages/forms.ts'
import { setFlash, takeFlash } from '../pages/session.ts'
import { personalAccessTokensPage, type TokenForm } from '../pages/views/personal-access-tokens.ts'
import { listPersonalAccessTokens, revokePersonalAccessToken } from '../repositories/personal-access-tokens.ts'

const PATH = '/profile/personal_access_tokens'
const EMPTY: TokenForm = { name: '', scopes: [], expiresAt: '' }

/** The form's errors as sentences, and which fields to mark. */
function check(form: TokenForm, user: { admin: boolean }): { errors: string[]; invalid: Set<string> } {
  const problems = tokenProblems({
    name: form.name,
    scopes: form.scopes,
    expiresAt: form.expiresAt || null,
    administratorScopes: administratorScopesOf(user),
  })
  return { errors: problems.map(sentence), invalid: new Set(problems.map((p) => p.field)) }
}

export const profileTokenRoutes = routePlugin('oauth-profile-tokens-routes', (app) => {
  const { db } = app

  const listTokens = (userId: number) => listPersonalAccessTokens(db, userId, 'desc')

  accountGet(app, PATH, { summary: 'Personal access tokens page' }, async (_request, reply, account) => {
    const flash = await takeFlash(app, account.session)
    const page = personalAccessTokensPage({
      csrf: account.csrf,
      tokens: await listTokens(account.user.id),
      form: EMPTY,
      errors: [],
      invalid: new Set(),
      created: flash.secret,
      notice: flash.notice,
    })
    return sendAccountPage(reply, account, 'Personal access tokens', page, { script: true })
  })

  accountPost(
    app,
    PATH,
    {
      summary: 'Create a personal access token (its value is shown once)',
      unprocessable: true,
      body: {
        name: Type.Optional(Type.String()),
        expires_at: Type.Optional(Type.String({ description: 'YYYY-MM-DD, or empty for no expiry' })),
        scopes: Type.Optional(Type.Array(Type.String())),
      },
    },
    async (request, reply, account) => {
      const form: TokenForm = {
        name: field(request.body, 'name') ?? '',
        expiresAt: (field(request.body, 'expires_at') ?? '').trim(),
        scopes: fieldList(request.body, 'scopes'),
      }
      const checked = check(form, account.user)
      if (checked.errors.length) {
        const page = personalAccessTokensPage({
          csrf: account.csrf,
          tokens: await listTokens(account.user.id),
          form,
          ...checked,
        })
        return sendAccountPage(reply, account, 'Personal access tokens', page, { status: 422 })
      }
      const { token, id } = await createPersonalAccessToken(db, {
        userId: account.user.id,
        name: form.name,
        scopes: form.scopes,
        expiresAt: form.expiresAt || null,
        administratorScopes: administratorScopesOf(account.user),
      })
      await app.audit.record({
        event: 'personal_access_token_created',
        ...byUser(account.user, request.ip),
        target: { type: 'PersonalAccessToken', id, details: form.name },
        message: `Created the personal access token ${form.name} (${form.scopes.join(' ')})`,
      })
      await setFlash(app, account.session, { secret: token })
      return reply.redirect(PATH, 303)
    },
  )

  accountPost(
    app,
    `${PATH}/:id/revoke`,
    { summary: 'Revoke a personal access token', params: IdParams },
    async (request, reply, account) => {
      const id = pathId(request)
      if (id === undefined || !(await revokePersonalAccessToken(db, id, account.user.id))) return notFound(reply)
      await app.audit.record({
        event: 'personal_access_token_revoked',
        ...byUser(account.user, request.ip),
        target: { type: 'PersonalAccessToken', id },
        message: 'Revoked a personal access token',
      })
      await setFlash(app, account.session, { notice: 'The token was revoked.' })
      return reply.redirect(PATH, 303)
    },
  )
})
