-- The device authorization grant (RFC 8628): a device asks for a pair of codes, a person enters
-- the short one on /oauth/device and decides, the device polls the token endpoint with the long
-- one. Both codes are kept only as SHA-256 digests; a grant is redeemed once (consumed_at).
create table device_grants (
  id bigserial primary key,
  device_code_digest bytea not null unique,
  user_code_digest bytea not null unique,
  application_id bigint not null references applications (id) on delete cascade,
  scopes text[] not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  -- seconds a client waits between polls; raised by 5 at each slow_down (RFC 8628 3.5)
  poll_interval integer not null,
  last_polled_at timestamptz,
  user_id bigint references users (id) on delete cascade,
  decision text check (decision in ('approved', 'denied')),
  consumed_at timestamptz,
  check ((decision is null) = (user_id is null))
);
create index device_grants_expires_at on device_grants (expires_at);

alter table applications drop constraint applications_grant_types_known;
alter table applications
  add constraint applications_grant_types_known
  check (grant_types <@ array['authorization_code', 'implicit', 'password', 'refresh_token', 'client_credentials',
    'urn:ietf:params:oauth:grant-type:device_code']::text[]);
