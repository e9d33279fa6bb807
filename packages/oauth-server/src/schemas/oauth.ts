import Type from 'typebox'

/** RFC 6749 5.2 error body. */
export const OAuthErrorBody = Type.Object(
  {
    error: Type.String({ description: 'RFC 6749 / 6750 / 7009 error code' }),
    error_description: Type.Optional(Type.String()),
    scope: Type.Optional(Type.String({ description: 'insufficient_scope: what would do' })),
  },
  { description: 'OAuth error (RFC 6749 5.2)' },
)

/** GitLab's API error body. */
export const MessageBody = Type.Object({ message: Type.String() }, { description: 'GitLab API error' })

export const TokenResponseBody = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.Union([Type.Literal('Bearer'), Type.Literal('DPoP')], {
      description: 'DPoP for a token bound to the key of the DPoP proof sent (RFC 9449 5)',
    }),
    expires_in: Type.Integer({ description: 'Seconds' }),
    refresh_token: Type.Optional(Type.String({ description: 'Not issued by the password grant' })),
    scope: Type.String(),
    created_at: Type.Integer({ description: 'Unix time, seconds' }),
    id_token: Type.Optional(Type.String({ description: 'OpenID Connect, for the openid scope' })),
  },
  { description: 'RFC 6749 5.1 token response' },
)

export const OAuthErrorResponses = {
  400: OAuthErrorBody,
  401: OAuthErrorBody,
  403: OAuthErrorBody,
  429: OAuthErrorBody,
  500: OAuthErrorBody,
}
