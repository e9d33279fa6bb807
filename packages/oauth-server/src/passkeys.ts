/**
 * Passkeys (WebAuthn Level 3) through @simplewebauthn/server: the options a browser's ceremony
 * starts from, and the verification of what it answers. The relying party is the issuer's host
 * and origin. A refused or malformed answer is `undefined`: the caller counts it as a failed
 * attempt. Only the public key is kept; user verification is required for a sign-in without a
 * password, where the passkey stands for both factors.
 */
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server'
import type { OAuthSettings } from './config.ts'
import type { Passkey } from './repositories/passkeys.ts'

const relyingParty = (settings: Pick<OAuthSettings, 'issuer'>) => {
  const url = new URL(settings.issuer)
  return { rpID: url.hostname, origin: url.origin }
}

/** Largest answer of a ceremony read (an attestation with its certificate chain is a few kB). */
export const MAX_RESPONSE_LENGTH = 32_768

/** The browser's answer, parsed; undefined when it is not one. */
export function parseCeremonyResponse<T extends { id: string }>(text: string | undefined): T | undefined {
  if (!text || text.length > MAX_RESPONSE_LENGTH) return undefined
  try {
    const value = JSON.parse(text) as unknown
    return value && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'string'
      ? (value as T)
      : undefined
  } catch {
    return undefined
  }
}

export function registrationOptions(
  settings: Pick<OAuthSettings, 'issuer'>,
  user: { id: number; username: string; name: string },
  existing: readonly Passkey[],
) {
  return generateRegistrationOptions({
    rpName: new URL(settings.issuer).host,
    rpID: relyingParty(settings).rpID,
    userName: user.username,
    userDisplayName: user.name,
    userID: new TextEncoder().encode(`user:${user.id}`),
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: p.transports })),
    // discoverable, so that it also signs in without a username and password
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
  })
}

export async function verifyRegistration(
  settings: Pick<OAuthSettings, 'issuer'>,
  response: RegistrationResponseJSON,
  challenge: string,
) {
  const { rpID, origin } = relyingParty(settings)
  try {
    const result = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: false,
    })
    return result.verified ? result.registrationInfo.credential : undefined
  } catch {
    return undefined
  }
}

export function authenticationOptions(settings: Pick<OAuthSettings, 'issuer'>, allowed?: readonly Passkey[]) {
  return generateAuthenticationOptions({
    rpID: relyingParty(settings).rpID,
    userVerification: allowed ? 'preferred' : 'required',
    ...(allowed ? { allowCredentials: allowed.map((p) => ({ id: p.credential_id, transports: p.transports })) } : {}),
  })
}

/** The authenticator's new counter when the answer is a valid assertion of `passkey`. */
export async function verifyAuthentication(
  settings: Pick<OAuthSettings, 'issuer'>,
  response: AuthenticationResponseJSON,
  challenge: string,
  passkey: Passkey,
  userVerification: boolean,
): Promise<number | undefined> {
  const { rpID, origin } = relyingParty(settings)
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      credential: {
        id: passkey.credential_id,
        publicKey: new Uint8Array(passkey.public_key),
        counter: Number(passkey.sign_count),
        transports: passkey.transports as never,
      },
      requireUserVerification: userVerification,
    })
    return result.verified ? result.authenticationInfo.newCounter : undefined
  } catch {
    return undefined
  }
}
