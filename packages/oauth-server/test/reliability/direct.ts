import type { TestDatabase } from '@campus/shared/testing'
import { approve } from '../../src/authorization/response.ts'
import type { OAuthDB } from '../../src/db/schema.ts'
import { basic, postForm, type seed } from '../helpers.ts'

/** A code issued straight into the database and redeemed at `base`: a fresh token pair for alice. */
export async function issueCode(
  database: TestDatabase<OAuthDB>,
  data: Awaited<ReturnType<typeof seed>>,
  base: string,
): Promise<{ access_token: string; refresh_token: string }> {
  const redirectUri = 'https://client.example/cb'
  const location = await approve(
    database.db,
    {
      client: data.web,
      redirectUri,
      responseType: 'code',
      scopes: ['api'],
      state: undefined,
      codeChallenge: undefined,
      codeChallengeMethod: undefined,
      nonce: undefined,
    },
    data.alice.id,
    base,
  )
  const code = new URL(location).searchParams.get('code') as string
  const token = await postForm(
    base,
    '/oauth/token',
    { grant_type: 'authorization_code', code, redirect_uri: redirectUri },
    { authorization: basic(data.web.uid, data.web.secret) },
  )
  if (token.status !== 200) throw new Error(`code exchange failed: ${JSON.stringify(token.body)}`)
  return token.body as { access_token: string; refresh_token: string }
}
