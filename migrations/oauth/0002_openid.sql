-- OpenID Connect: the nonce of an authorization request travels with its code into the
-- id_token; id_tokens are signed with keys kept here (private part sealed with the server key).

alter table authorization_codes add column nonce text;
alter table authorization_codes add column auth_time timestamptz;

create table signing_keys (
  kid text primary key,
  alg text not null,
  public_jwk jsonb not null,
  -- AES-256-GCM under the server's secret key, never in clear
  private_jwk_sealed text not null,
  created_at timestamptz not null default now(),
  retired_at timestamptz
);
