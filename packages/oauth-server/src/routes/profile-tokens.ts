/** /profile/personal_access_tokens: create (value shown once), list, revoke. */
import { sql } from 'kysely'
import Type from 'typebox'
import type { ServerContext } from '../context.ts'
import { isKnownScope } from '../domain/scopes.ts'
import { digest, generateSecret } from '../domain/secrets.ts'
import { sendAccountPage } from '../pages/account.ts'
import { setFlash, takeFlash } from '../pages/session.ts'
import { personalAccessTokensPage, type TokenForm } from '../pages/views/personal-access-tokens.ts'
import { insertPersonalAccessToken, revokePersonalAccessToken } from '../repositories/personal-access-tokens.ts'
import { accountGet, accountPost, fieldList, IdParams, notFound, pathId } from './account-routes.ts'
import { field } from './pages-schema.ts'
import type { OAuthApp } from './types.ts'

const PATH = '/profile/personal_access_tokens'
const EMPTY: TokenForm = { name: '', scopes: [], expiresAt: '' }

function check(form: TokenForm, today: string): { errors: string[]; invalid: Set<string> } {
  const errors: string[] = []
  const invalid = new Set<string>()
  if (!form.name.trim()) {
    errors.push('Token name is required.')
    invalid.add('name')
  } else if (form.name.length > 255) {
    errors.push('Token name is too long (at most 255 characters).')
    invalid.add('name')
  }
  if (form.expiresAt) {
    const valid = /^\d{4}-\d{2}-\d{2}$/.test(form.expiresAt) && !Number.isNaN(Date.parse(form.expiresAt))
    if (!valid) {
      errors.push('Expiration date must be a date (YYYY-MM-DD).')
      invalid.add('expires_at')
    } else if (form.expiresAt <= today) {
      errors.push('Expiration date must be in the future.')
      invalid.add('expires_at')
    }
  }
  if (form.scopes.length === 0) errors.push('Select at least one scope.')
  for (const s of form.scopes) if (!isKnownScope(s)) errors.push(`The scope ${s} is unknown.`)
  return { errors, invalid }
}

export function profileTokenRoutes(app: OAuthApp, context: ServerContext): void {
  const { db } = context

  const listTokens = (userId: number) =>
    db
      .selectFrom('personal_access_tokens')
      .selectAll()
      .select(sql<boolean>`coalesce(expires_at <= current_date, false)`.as('expired'))
      .where('user_id', '=', userId)
      .orderBy('id', 'desc')
      .execute()

  accountGet(app, context, PATH, { summary: 'Personal access tokens page' }, async (_request, reply, account) => {
    const flash = await takeFlash(context, account.session)
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
    context,
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
      const checked = check(form, new Date().toISOString().slice(0, 10))
      if (checked.errors.length) {
        const page = personalAccessTokensPage({
          csrf: account.csrf,
          tokens: await listTokens(account.user.id),
          form,
          ...checked,
        })
        return sendAccountPage(reply, account, 'Personal access tokens', page, { status: 422 })
      }
      const token = generateSecret('personalAccessToken')
      await insertPersonalAccessToken(db, {
        digest: digest(token),
        userId: account.user.id,
        name: form.name.trim(),
        scopes: form.scopes,
        expiresAt: form.expiresAt || null,
      })
      await setFlash(context, account.session, { secret: token })
      return reply.redirect(PATH, 303)
    },
  )

  accountPost(
    app,
    context,
    `${PATH}/:id/revoke`,
    { summary: 'Revoke a personal access token', params: IdParams },
    async (request, reply, account) => {
      const id = pathId(request)
      if (id === undefined || !(await revokePersonalAccessToken(db, id, account.user.id))) return notFound(reply)
      await setFlash(context, account.session, { notice: 'The token was revoked.' })
      return reply.redirect(PATH, 303)
    },
  )
}
