-- Audit events in GitLab's shape (its AuditEvent: author, entity, event name, details with the
-- target and the address): who signed in or failed to, second factors added or removed,
-- applications created, secrets renewed, consents granted and revoked, tokens issued and revoked,
-- administrators' actions. No secret is ever written here (no token, code, secret, password, nor a
-- login typed for no account). No foreign keys: the record outlives the users and applications it
-- names. Kept OAUTH_AUDIT_RETENTION_DAYS, then purged by the sweep.
create table audit_events (
  id bigserial primary key,
  -- the user who acted; null when nobody was signed in, or for the command line
  author_id bigint,
  author_name text not null,
  entity_type text not null,
  entity_id bigint,
  entity_path text,
  event_name text not null,
  target_type text,
  target_id text,
  target_details text,
  custom_message text not null,
  ip_address text,
  created_at timestamptz not null default now()
);
create index audit_events_created_at on audit_events (created_at);
create index audit_events_entity on audit_events (entity_type, entity_id, id);
