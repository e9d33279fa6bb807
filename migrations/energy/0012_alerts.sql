-- Alerts: rules written by an operator (`pnpm energy alert:create`, POST /alerts/rules), the alerts
-- their evaluation raises (pending -> firing -> resolved, kept as history), and the outbox of the
-- webhook's notifications, written in the transaction that changes an alert's state so that a
-- restart neither loses one nor makes a new one for a notification already queued.

create table alert_rules (
  id serial primary key,
  name text not null unique,
  -- stale | threshold | night-baseline | quarantine
  kind text not null check (kind in ('stale', 'threshold', 'night-baseline', 'quarantine')),
  datalogger text,
  meter integer,
  -- the kind's own parameters (minutes, above/below and quarters, percent, count and minutes)
  params jsonb not null default '{}',
  -- Prometheus's `for`: how long the condition holds (pending) before the alert fires
  for_seconds integer not null default 0 check (for_seconds >= 0),
  severity text not null default 'warning',
  created_at timestamptz not null default now()
);

create table alerts (
  id bigserial primary key,
  -- null once its rule is deleted: the history stays
  rule_id integer references alert_rules (id) on delete set null,
  rule_name text not null,
  -- what one alert of a rule is about: the datalogger or meter it names (a rule may raise one per datalogger)
  subject text not null,
  labels jsonb not null,
  state text not null check (state in ('pending', 'firing', 'resolved')),
  value double precision,
  summary text not null,
  -- since when the condition holds (Prometheus's activeAt), when it fired, when it ended
  active_at timestamptz not null,
  fired_at timestamptz,
  resolved_at timestamptz,
  updated_at timestamptz not null default now(),
  -- when Alertmanager last had it (re-sent while firing, and for a while once resolved)
  alertmanager_sent_at timestamptz
);
-- one open alert per rule and subject: the evaluation's upserts close the race between instances
create unique index alerts_open_idx on alerts (rule_id, subject) where state <> 'resolved';
create index alerts_updated_idx on alerts (updated_at);

create table alert_outbox (
  id bigserial primary key,
  alert_id bigint not null references alerts (id) on delete cascade,
  -- the alert and the state it reached: a receiver that honours it takes each notification once
  idempotency_key text not null unique,
  body jsonb not null,
  created_at timestamptz not null default now(),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  sent_at timestamptz,
  last_error text
);
create index alert_outbox_due_idx on alert_outbox (next_attempt_at) where sent_at is null;

-- The data API evaluates and delivers alerts: its read-only role may write these tables, and
-- still no measurement.
grant select, insert, update, delete on alert_rules, alerts, alert_outbox to energy_reader;
grant usage on sequence alert_rules_id_seq, alerts_id_seq, alert_outbox_id_seq to energy_reader;
