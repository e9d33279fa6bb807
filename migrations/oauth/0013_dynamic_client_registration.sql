-- Dynamic client registration (RFC 7591, 7592). A client that registers itself gets a
-- registration access token to read, change or delete its registration, kept only as a SHA-256
-- digest; that digest is also what marks the application as registered by itself (no user owns
-- it, and it is no application of the instance: it cannot be trusted nor be a resource server).
alter table applications add column registration_token_digest bytea unique;
alter table applications
  add constraint applications_registered_untrusted check (registration_token_digest is null or not trusted);
alter table applications
  add constraint applications_registered_no_resource_server
  check (registration_token_digest is null or not resource_server);

-- Initial access tokens (RFC 7591 3) an administrator issues (pnpm oauth registration-token:create)
-- when OAUTH_REGISTRATION=token: each registers at most `uses_left` clients before it expires.
create table initial_access_tokens (
  id bigserial primary key,
  digest bytea not null unique,
  name text not null,
  uses_left integer not null check (uses_left >= 0),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
