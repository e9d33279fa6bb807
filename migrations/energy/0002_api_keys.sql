-- API keys of the data API. Only the SHA-256 digest of a key is stored: a dump grants nothing.
-- `endpoints` holds path patterns the key may call (`/data/*`, `/metadata/meters/*`, `*`).
create table api_keys (
  id bigint generated always as identity primary key,
  name text not null,
  digest bytea not null unique,
  prefix text not null,
  endpoints text[] not null default '{}',
  created_at timestamptz not null default now(),
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz,
  constraint api_keys_digest_length check (octet_length(digest) = 32)
);
create index api_keys_name_idx on api_keys (name);
