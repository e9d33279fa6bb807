-- Passkeys (WebAuthn): a second factor next to TOTP, and a sign-in without a password for whoever
-- registered one. The public key only (COSE), the credential id, the signature counter; the
-- ceremony's challenge waits on the browser's session until it is answered, once.
create table passkeys (
  id bigserial primary key,
  user_id bigint not null references users (id) on delete cascade,
  credential_id text not null unique,
  public_key bytea not null,
  sign_count bigint not null default 0,
  transports text[] not null default '{}',
  name text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz
);
create index passkeys_user_id on passkeys (user_id);

alter table sessions add column webauthn_challenge text;
