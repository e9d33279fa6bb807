-- Pushed authorization requests (RFC 9126): the client posts its authorization parameters, then
-- sends the browser to /oauth/authorize with the request_uri it got back. The request_uri is
-- kept only as the SHA-256 digest of its random part. It must be opened within a minute; once
-- opened, it lasts while the person signs in and decides (as long as a code), and the decision
-- consumes it.
create table pushed_authorization_requests (
  id bigserial primary key,
  digest bytea not null unique,
  application_id bigint not null references applications (id) on delete cascade,
  parameters jsonb not null,
  dpop_jkt text check (length(dpop_jkt) = 43),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  opened_at timestamptz,
  consumed_at timestamptz
);
create index pushed_authorization_requests_expires_at on pushed_authorization_requests (expires_at);

-- RFC 9126 5: an application that must push its authorization requests
alter table applications add column require_pushed_authorization_requests boolean not null default false;
