/** /profile/two_factor_auth: TOTP enrolment (QR code, manual key, confirming code), recovery codes, disable. */
import { URL } from 'node:url'
import QRCode from 'qrcode'
import Type from 'typebox'
import { byUser } from '../audit.ts'
import { confirmPassword } from '../credentials.ts'
import type { User } from '../db/schema.ts'
import { generateRecoveryCodes, recoveryCodeDigest } from '../domain/recovery-codes.ts'
import { OTP_PURPOSE, openSecret, sealSecret } from '../domain/secret-box.ts'
import { generateTotpSecret, otpauthUri, verifyTotp } from '../domain/totp.ts'
import { routePlugin } from '../oauth-app.ts'
import { type Account, sendAccountPage } from '../pages/account.ts'
import { accountGet, accountPost } from '../pages/account-routes.ts'
import { field } from '../pages/forms.ts'
import { setFlash, takeFlash } from '../pages/session.ts'
import { enabledPage, enrolPage } from '../pages/views/two-factor.ts'
import { countUnusedRecoveryCodes } from '../repositories/recovery-codes.ts'
import { disableTwoFactor, enableTwoFactor, findUserById, setPendingOtpSecret } from '../repositories/users.ts'

const PATH = '/profile/two_factor_auth'

export const profileTwoFactorRoutes = routePlugin('oauth-profile-two-factor-routes', (app) => {
  const { db, settings } = app

  /** The seed offered for enrolment: kept (sealed) until confirmed, so a reload shows the same QR code. */
  async function pendingSecret(user: User): Promise<string> {
    if (user.otp_pending_secret) return openSecret(settings.secretKey, user.otp_pending_secret, OTP_PURPOSE)
    const secret = generateTotpSecret()
    await setPendingOtpSecret(db, user.id, sealSecret(settings.secretKey, secret, OTP_PURPOSE))
    return secret
  }

  async function enrolment(account: Account, errors: string[], status = 200) {
    const secret = await pendingSecret(account.user)
    const uri = otpauthUri(secret, account.user.username, new URL(settings.issuer).host)
    const qrSvg = await QRCode.toString(uri, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' })
    return { status, page: enrolPage({ csrf: account.csrf, qrSvg, secret, otpauthUri: uri, errors }) }
  }

  accountGet(app, PATH, { summary: 'Two-factor authentication page' }, async (_request, reply, account) => {
    const flash = await takeFlash(app, account.session)
    if (!account.user.otp_secret) {
      const { page } = await enrolment(account, [])
      return sendAccountPage(reply, account, 'Two-factor authentication', page, { script: true })
    }
    const page = enabledPage({
      csrf: account.csrf,
      codes: flash.codes,
      unusedCodes: await countUnusedRecoveryCodes(db, account.user.id),
      errors: [],
      notice: flash.notice,
    })
    return sendAccountPage(reply, account, 'Two-factor authentication', page, { script: true })
  })

  accountPost(
    app,
    PATH,
    {
      summary: 'Confirm the authenticator with a code: two-factor authentication on, recovery codes shown once',
      unprocessable: true,
      body: { otp_code: Type.Optional(Type.String({ description: 'Six-digit TOTP code' })) },
    },
    async (request, reply, account) => {
      if (account.user.otp_secret) return reply.redirect(PATH, 303)
      const secret = await pendingSecret(account.user)
      const step = verifyTotp(secret, (field(request.body, 'otp_code') ?? '').replace(/\s/g, ''), null)
      if (step === undefined) {
        const { page } = await enrolment(account, [
          'The code is not valid. Check the time on your device and try again.',
        ])
        return sendAccountPage(reply, account, 'Two-factor authentication', page, { status: 422, script: true })
      }
      const codes = generateRecoveryCodes()
      // two_factor_enabled is part of the cached user rows: a change, so every instance forgets them
      await app.changes.commit((trx) =>
        enableTwoFactor(
          trx,
          account.user.id,
          sealSecret(settings.secretKey, secret, OTP_PURPOSE),
          step,
          codes.map(recoveryCodeDigest),
        ),
      )
      await app.audit.record({
        event: 'two_factor_enabled',
        ...byUser(account.user, request.ip),
        message: 'Enabled two-factor authentication (TOTP)',
      })
      await setFlash(app, account.session, { notice: 'Two-factor authentication is on.', codes })
      return reply.redirect(PATH, 303)
    },
  )

  accountPost(
    app,
    `${PATH}/disable`,
    {
      summary: 'Disable two-factor authentication (current password required)',
      unprocessable: true,
      body: { current_password: Type.Optional(Type.String()) },
    },
    async (request, reply, account) => {
      const user = await findUserById(db, account.user.id)
      if (!user?.otp_secret) return reply.redirect(PATH, 303)
      const check = await confirmPassword(app, user, field(request.body, 'current_password') ?? '', request.ip)
      if (check.outcome !== 'accepted') {
        const page = enabledPage({
          csrf: account.csrf,
          unusedCodes: await countUnusedRecoveryCodes(db, user.id),
          errors: [
            check.outcome === 'throttled'
              ? `Too many failed attempts. Try again in ${check.wait} seconds.`
              : 'The password is not correct.',
          ],
        })
        return sendAccountPage(reply, account, 'Two-factor authentication', page, { status: 422, script: true })
      }
      await app.changes.commit((trx) => disableTwoFactor(trx, user.id))
      await app.audit.record({
        event: 'two_factor_disabled',
        ...byUser(user, request.ip),
        message: 'Disabled two-factor authentication (TOTP)',
      })
      await setFlash(app, account.session, { notice: 'Two-factor authentication is off.' })
      return reply.redirect(PATH, 303)
    },
  )
})
