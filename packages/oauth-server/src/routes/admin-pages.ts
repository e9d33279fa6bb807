/** /admin: users (lock, unlock) and applications (trusted). Anyone but an administrator gets 404. */

import { routePlugin } from '../oauth-app.ts'
import { sendAccountPage } from '../pages/account.ts'
import { accountGet, accountPost, notFound } from '../pages/account-routes.ts'
import { IdParams, pathId } from '../pages/forms.ts'
import { setFlash, takeFlash } from '../pages/session.ts'
import { adminApplicationsPage, adminUsersPage } from '../pages/views/admin.ts'
import { listAllApplications, setApplicationTrusted } from '../repositories/applications.ts'
import { listUsers, setUserLocked } from '../repositories/users.ts'

export const adminPageRoutes = routePlugin('oauth-admin-pages-routes', (app) => {
  const { db } = app

  accountGet(app, '/admin/users', { summary: 'Users (administrators)', admin: true }, async (_r, reply, account) => {
    const flash = await takeFlash(app, account.session)
    const page = adminUsersPage({
      csrf: account.csrf,
      users: await listUsers(db),
      selfId: account.user.id,
      notice: flash.notice,
    })
    return sendAccountPage(reply, account, 'Users', page)
  })

  for (const action of ['lock', 'unlock'] as const) {
    accountPost(
      app,
      `/admin/users/:id/${action}`,
      {
        summary:
          action === 'lock'
            ? 'Lock an account: no sign-in, no token works, sessions end'
            : 'Unlock an account (administrators)',
        params: IdParams,
        admin: true,
      },
      async (request, reply, account) => {
        const id = pathId(request)
        // cached token lookups carry the user row: every instance drops them, so the lock applies at once
        const changed =
          id !== undefined &&
          id !== account.user.id &&
          (await app.changes.commit((trx) => setUserLocked(trx, id, action === 'lock')))
        if (!changed) return notFound(reply)
        await app.audit.record({
          event: action === 'lock' ? 'user_blocked' : 'user_unblocked',
          author: { user: account.user },
          target: { type: 'User', id },
          message: action === 'lock' ? 'Locked a user: sessions ended, tokens refused' : 'Unlocked a user',
          ip: request.ip,
        })
        await setFlash(app, account.session, {
          notice: action === 'lock' ? 'The user was locked.' : 'The user was unlocked.',
        })
        return reply.redirect('/admin/users', 303)
      },
    )
  }

  accountGet(
    app,
    '/admin/applications',
    { summary: 'Applications (administrators)', admin: true },
    async (_r, reply, account) => {
      const flash = await takeFlash(app, account.session)
      const page = adminApplicationsPage({
        csrf: account.csrf,
        applications: await listAllApplications(db),
        notice: flash.notice,
      })
      return sendAccountPage(reply, account, 'Applications', page)
    },
  )

  for (const action of ['trust', 'untrust'] as const) {
    accountPost(
      app,
      `/admin/applications/:id/${action}`,
      {
        summary: action === 'trust' ? 'Mark an application trusted (no consent page)' : 'Mark an application untrusted',
        params: IdParams,
        admin: true,
      },
      async (request, reply, account) => {
        const id = pathId(request)
        const outcome =
          id === undefined
            ? 'unknown'
            : await app.changes.commit((trx) => setApplicationTrusted(trx, id, action === 'trust'))
        if (outcome === 'unknown') return notFound(reply)
        if (outcome === 'changed') {
          await app.audit.record({
            event: action === 'trust' ? 'oauth_application_trusted' : 'oauth_application_untrusted',
            author: { user: account.user },
            target: { type: 'Doorkeeper::Application', id: id as number },
            message: action === 'trust' ? 'Trusted an application: no consent page' : 'Stopped trusting an application',
            ip: request.ip,
          })
        }
        await setFlash(app, account.session, {
          notice:
            outcome === 'owned'
              ? 'Only instance-wide applications can be trusted: this one belongs to a user, who could point it anywhere.'
              : action === 'trust'
                ? 'The application is trusted.'
                : 'The application is no longer trusted.',
        })
        return reply.redirect('/admin/applications', 303)
      },
    )
  }
})
