/**
 * /profile/two_factor_auth: TOTP enrolment (QR code, manual key, confirming code), recovery codes,
 * passkeys (added and removed once TOTP is on; removed with it), disable.
 */
import { URL } from 'node:url'
import type { RegistrationResponseJSON } from '@simplewebauthn/server'
import QRCode from 'qrcode'
import Type from 'typebox'
import { byUser } from '../audit.ts'
import { confirmPassword } from '../credentials.ts'
import type { User } from '../db/schema.ts'
import { generateRecoveryCodes, recoveryCodeDigest } from '../domain/recovery-codes.ts'
import { OTP_PURPOSE, openSecret, sealSecret } from '../domain/secret-box.ts'
import { generateTotpSecret, otpauthUri, verifyTotp } from '../domain/totp.ts'
import { routePlugin } from '../oauth-app.ts'
import { type Account, currentAccount, sendAccountPage } from '../pages/account.ts'
import { accountGet, accountPost, notFound } from '../pages/account-routes.ts'
import { field, pathId, refuseForm } from '../pages/forms.ts'
import { setFlash, takeFlash, validCsrf } from '../pages/session.ts'
import { enabledPage, enrolPage } from '../pages/views/two-factor.ts'
import { parseCeremonyResponse, registrationOptions, verifyRegistration } from '../passkeys.ts'
import {
  deletePasskey,
  deleteUserPasskeys,
  insertPasskey,
  listPasskeys,
  setSessionChallenge,
  takeSessionChallenge,
} from '../repositories/passkeys.ts'
import { countUnusedRecoveryCodes } from '../repositories/recovery-codes.ts'
import { disableTwoFactor, enableTwoFactor, findUserById, setPendingOtpSecret } from '../repositories/users.ts'
import { MessageBody } from '../schemas/oauth.ts'
import { HtmlPage } from '../schemas/pages.ts'

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
      passkeys: await listPasskeys(db, account.user.id),
    })
    return sendAccountPage(reply, account, 'Two-factor authentication', page, { script: true, passkeys: true })
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
          passkeys: await listPasskeys(db, user.id),
          errors: [
            check.outcome === 'throttled'
              ? `Too many failed attempts. Try again in ${check.wait} seconds.`
              : 'The password is not correct.',
          ],
        })
        return sendAccountPage(reply, account, 'Two-factor authentication', page, { status: 422, script: true })
      }
      // no second factor is left: the passkeys go with the code
      await app.changes.commit(async (trx) => {
        await disableTwoFactor(trx, user.id)
        await deleteUserPasskeys(trx, user.id)
      })
      await app.audit.record({
        event: 'two_factor_disabled',
        ...byUser(user, request.ip),
        message: 'Disabled two-factor authentication (TOTP)',
      })
      await setFlash(app, account.session, { notice: 'Two-factor authentication is off.' })
      return reply.redirect(PATH, 303)
    },
  )

  app.post(
    `${PATH}/passkeys/options`,
    {
      attachValidation: true,
      schema: {
        tags: ['Pages'],
        summary: 'WebAuthn options to add a passkey (two-factor authentication on)',
        consumes: ['application/x-www-form-urlencoded'],
        body: Type.Object({ csrf_token: Type.String() }),
        response: {
          200: Type.Object({}, { additionalProperties: true, description: 'WebAuthn options (JSON)' }),
          403: HtmlPage('Missing or wrong CSRF token, or signed out'),
          404: MessageBody,
        },
      },
    },
    async (request, reply) => {
      const account = await currentAccount(request, app)
      if (!account || !validCsrf(account.session, field(request.body, 'csrf_token'))) return refuseForm(reply)
      if (!account.user.otp_secret) return reply.code(404).send({ message: 'Turn two-factor authentication on first' })
      const options = await registrationOptions(settings, account.user, await listPasskeys(db, account.user.id))
      await setSessionChallenge(db, account.session.row.id_digest, options.challenge)
      return reply.header('cache-control', 'no-store').send(options)
    },
  )

  accountPost(
    app,
    `${PATH}/passkeys`,
    {
      summary: 'Add a passkey: the answer of the registration ceremony',
      body: { name: Type.Optional(Type.String()), webauthn_response: Type.Optional(Type.String()) },
    },
    async (request, reply, account) => {
      const challenge = await takeSessionChallenge(db, account.session.row.id_digest)
      const answer = parseCeremonyResponse<RegistrationResponseJSON>(field(request.body, 'webauthn_response'))
      const name = (field(request.body, 'name') ?? '').trim().slice(0, 100) || 'Passkey'
      const credential =
        account.user.otp_secret && challenge && answer
          ? await verifyRegistration(settings, answer, challenge)
          : undefined
      if (!credential) {
        await setFlash(app, account.session, { notice: 'The passkey was not added: the browser answer was not valid.' })
        return reply.redirect(PATH, 303)
      }
      await insertPasskey(db, {
        userId: account.user.id,
        credentialId: credential.id,
        publicKey: Buffer.from(credential.publicKey),
        signCount: credential.counter,
        transports: credential.transports ?? [],
        name,
      })
      await app.audit.record({
        event: 'passkey_added',
        ...byUser(account.user, request.ip),
        target: { type: 'WebAuthnRegistration', id: credential.id, details: name },
        message: `Added the passkey ${name}`,
      })
      await setFlash(app, account.session, { notice: `The passkey ${name} was added.` })
      return reply.redirect(PATH, 303)
    },
  )

  accountPost(
    app,
    `${PATH}/passkeys/:id/delete`,
    {
      summary: 'Remove a passkey (current password required)',
      params: Type.Object({ id: Type.String() }),
      body: { current_password: Type.Optional(Type.String()) },
    },
    async (request, reply, account) => {
      const id = pathId(request)
      const check = await confirmPassword(app, account.user, field(request.body, 'current_password') ?? '', request.ip)
      if (check.outcome !== 'accepted') {
        const notice =
          check.outcome === 'throttled'
            ? `Too many failed attempts. Try again in ${check.wait} seconds.`
            : 'The passkey was not removed: the password is not correct.'
        await setFlash(app, account.session, { notice })
        return reply.redirect(PATH, 303)
      }
      const removed = id === undefined ? undefined : await deletePasskey(db, id, account.user.id)
      if (!removed) return notFound(reply)
      await app.audit.record({
        event: 'passkey_removed',
        ...byUser(account.user, request.ip),
        target: { type: 'WebAuthnRegistration', id: removed.credential_id, details: removed.name },
        message: `Removed the passkey ${removed.name}`,
      })
      await setFlash(app, account.session, { notice: `The passkey ${removed.name} was removed.` })
      return reply.redirect(PATH, 303)
    },
  )
})
