-- Authorization server schema. Every code, token, client secret and session id is stored only
-- as the SHA-256 digest of a random 256-bit value; passwords as argon2id hashes. A dump of these
-- tables grants nothing.

create table users (
  id bigint generated always as identity primary key,
  username text not null,
  email text,
  name text not null,
  password_hash text not null,
  -- base32 TOTP secret (RFC 6238); null when two-factor authentication is off
  otp_secret text,
  -- last accepted TOTP time step, so one code cannot be used twice
  otp_last_step bigint,
  admin boolean not null default false,
  locked boolean not null default false,
  bio text not null default '',
  location text not null default '',
  public_email text not null default '',
  website_url text not null default '',
  organization text not null default '',
  job_title text not null default '',
  created_at timestamptz not null default now(),
  confirmed_at timestamptz,
  last_sign_in_at timestamptz,
  current_sign_in_at timestamptz,
  last_activity_on date
);
create unique index users_username_key on users (lower(username));
create unique index users_email_key on users (lower(email));

-- Browser sessions of the sign-in and consent pages; the cookie holds the random id.
create table sessions (
  id_digest bytea primary key,
  user_id bigint references users (id) on delete cascade,
  -- password accepted, second factor still due
  pending_user_id bigint references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  authenticated_at timestamptz,
  expires_at timestamptz not null
);
create index sessions_expires_idx on sessions (expires_at);

create table applications (
  id bigint generated always as identity primary key,
  uid text not null unique,
  -- null for public clients (no secret; PKCE required)
  secret_digest bytea,
  name text not null,
  redirect_uris text[] not null,
  scopes text[] not null,
  confidential boolean not null default true,
  trusted boolean not null default false,
  grant_types text[] not null default array['authorization_code', 'implicit', 'password', 'refresh_token'],
  owner_id bigint references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (confidential = (secret_digest is not null))
);

create table authorization_codes (
  id bigint generated always as identity primary key,
  digest bytea not null unique,
  application_id bigint not null references applications (id) on delete cascade,
  user_id bigint not null references users (id) on delete cascade,
  redirect_uri text not null,
  scopes text[] not null,
  code_challenge text,
  code_challenge_method text,
  -- tokens issued from this code carry the same grant id, so a replay can revoke them
  grant_id uuid not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  consumed_at timestamptz
);
create index authorization_codes_expires_idx on authorization_codes (expires_at);

create table access_tokens (
  id bigint generated always as identity primary key,
  digest bytea not null unique,
  -- null for a password grant made without client authentication
  application_id bigint references applications (id) on delete cascade,
  user_id bigint not null references users (id) on delete cascade,
  scopes text[] not null,
  grant_id uuid not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz
);
create index access_tokens_grant_idx on access_tokens (grant_id);
create index access_tokens_user_idx on access_tokens (user_id);

create table refresh_tokens (
  id bigint generated always as identity primary key,
  digest bytea not null unique,
  application_id bigint references applications (id) on delete cascade,
  user_id bigint not null references users (id) on delete cascade,
  access_token_id bigint references access_tokens (id) on delete set null,
  scopes text[] not null,
  -- the family: every refresh token of one authorization shares it
  grant_id uuid not null,
  created_at timestamptz not null default now(),
  -- set when exchanged for a new pair; presenting it again is reuse
  rotated_at timestamptz,
  revoked_at timestamptz
);
create index refresh_tokens_grant_idx on refresh_tokens (grant_id);

create table personal_access_tokens (
  id bigint generated always as identity primary key,
  digest bytea not null unique,
  user_id bigint not null references users (id) on delete cascade,
  name text not null,
  scopes text[] not null,
  created_at timestamptz not null default now(),
  expires_at date,
  revoked_at timestamptz,
  last_used_at timestamptz
);
create index personal_access_tokens_user_idx on personal_access_tokens (user_id);

-- Scopes a user approved for an application; a request within them skips the consent page.
create table consents (
  user_id bigint not null references users (id) on delete cascade,
  application_id bigint not null references applications (id) on delete cascade,
  scopes text[] not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (user_id, application_id)
);
