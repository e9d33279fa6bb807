/** /profile/two_factor_auth: TOTP enrolment (QR code, manual key, confirming code), recovery codes, disable. */
import { URL } from 'node:url'
import QRCode from 'qrcode'
import Type from 'typebox'
import type { ServerContext } from '../context.ts'
import type { User } from '../db/schema.ts'
import { generateRecoveryCodes, recoveryCodeDigest } from '../domain/recovery-codes.ts'
import { OTP_PURPOSE, openSecret, sealSecret } from '../domain/secret-box.ts'
import { generateTotpSecret, otpauthUri, verifyTotp } from '../domain/totp.ts'
import { type Account, sendAccountPage } from '../pages/account.ts'
import { setFlash, takeFlash } from '../pages/session.ts'
import { enabledPage, enrolPage } from '../pages/views/two-factor.ts'
import { verifyPassword } from '../passwords.ts'
import { countUnusedRecoveryCodes } from '../repositories/recovery-codes.ts'
import { disableTwoFactor, enableTwoFactor, findUserById, setPendingOtpSecret } from '../repositories/users.ts'
import { accountGet, accountPost } from './account-routes.ts'
import { field } from './pages-schema.ts'
import type { OAuthApp } from './types.ts'

const PATH = '/profile/two_factor_auth'

export function profileTwoFactorRoutes(app: OAuthApp, context: ServerContext): void {
  const { db, settings } = context

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

  accountGet(app, context, PATH, { summary: 'Two-factor authentication page' }, async (_request, reply, account) => {
    const flash = await takeFlash(context, account.session)
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
    context,
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
      await enableTwoFactor(
        db,
        account.user.id,
        sealSecret(settings.secretKey, secret, OTP_PURPOSE),
        step,
        codes.map(recoveryCodeDigest),
      )
      await setFlash(context, account.session, { notice: 'Two-factor authentication is on.', codes })
      return reply.redirect(PATH, 303)
    },
  )

  accountPost(
    app,
    context,
    `${PATH}/disable`,
    {
      summary: 'Disable two-factor authentication (current password required)',
      unprocessable: true,
      body: { current_password: Type.Optional(Type.String()) },
    },
    async (request, reply, account) => {
      const user = await findUserById(db, account.user.id)
      if (!user?.otp_secret) return reply.redirect(PATH, 303)
      const wait = await context.throttle.blocked(user.username, request.ip)
      const ok =
        wait === undefined && (await verifyPassword(user.password_hash, field(request.body, 'current_password') ?? ''))
      if (!ok) {
        if (wait === undefined) await context.throttle.failed(user.username, request.ip)
        const page = enabledPage({
          csrf: account.csrf,
          unusedCodes: await countUnusedRecoveryCodes(db, user.id),
          errors: [
            wait === undefined
              ? 'The password is not correct.'
              : `Too many failed attempts. Try again in ${wait} seconds.`,
          ],
        })
        return sendAccountPage(reply, account, 'Two-factor authentication', page, { status: 422, script: true })
      }
      await disableTwoFactor(db, user.id)
      await setFlash(context, account.session, { notice: 'Two-factor authentication is off.' })
      return reply.redirect(PATH, 303)
    },
  )
}
