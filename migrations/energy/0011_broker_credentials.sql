-- Who may connect to the MQTT broker: a datalogger (its username is its id; it may publish only to
-- its own topic) or an ingest instance (it alone may subscribe to the stream). The password is
-- kept as Mosquitto's PBKDF2-SHA512 `$7$` string, so that the embedded broker checks it and the
-- Mosquitto configuration is written from this table, one source for both.
create table broker_credentials (
  username text primary key,
  role text not null check (role in ('datalogger', 'ingest')),
  datalogger_id text references dataloggers (id) on delete cascade,
  password_hash text not null check (password_hash like '$7$%'),
  issued_at timestamptz not null default now(),
  constraint broker_credentials_datalogger check ((role = 'datalogger') = (datalogger_id is not null)),
  constraint broker_credentials_datalogger_name check (role <> 'datalogger' or username = datalogger_id)
);
