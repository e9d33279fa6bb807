-- Account pages: two-factor enrolment, recovery codes, one-time messages of a session.

-- TOTP seed offered on the enrolment page, sealed like otp_secret, until a code confirms it
alter table users add column otp_pending_secret text;

-- Single-use second factors shown once when 2FA is enabled; only their SHA-256 digests are kept.
create table recovery_codes (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  digest bytea not null,
  created_at timestamptz not null default now(),
  used_at timestamptz
);
create index recovery_codes_user_idx on recovery_codes (user_id);

-- A value to show once on the next page (a new client secret, token or recovery codes), sealed
-- with the server key (AES-256-GCM) so a dump of this table reveals nothing; read and cleared
-- in one statement.
alter table sessions add column flash_sealed text;
