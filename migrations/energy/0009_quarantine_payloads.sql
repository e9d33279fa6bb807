-- The quarantine keeps a refused message once, as the bytes that came, and its refusals refer to
-- it. Before, every refused record carried the whole payload as text: a 1,500-record pack of
-- refused records became 1,500 copies of it (hundreds of megabytes of query text), and a payload
-- holding a NUL byte could be neither written nor quarantined (text refuses NUL).

create table quarantine_payloads (
  id bigserial primary key,
  received_at timestamptz not null,
  -- where it came from: mqtt:<topic>, http:<credential>
  source text not null,
  -- the datalogger the topic names (its meters only, on replay too); null over HTTP
  datalogger text,
  -- SHA-256 of the whole payload as received: a redelivery from the same source is kept once
  digest bytea not null,
  -- bytes received; `payload` holds at most the ingest's cap of them
  size integer not null,
  payload bytea not null
);
create unique index quarantine_payloads_once_idx on quarantine_payloads (digest, source);
create index quarantine_payloads_received_idx on quarantine_payloads (received_at);

alter table quarantine add column payload_id bigint references quarantine_payloads (id) on delete cascade;

insert into quarantine_payloads (received_at, source, datalogger, digest, size, payload)
select distinct on (sha256(convert_to(payload, 'UTF8')), source)
  received_at, source, substring(source from '^mqtt:[^/]+/([^/]+)/senml$'),
  sha256(convert_to(payload, 'UTF8')), octet_length(convert_to(payload, 'UTF8')), convert_to(payload, 'UTF8')
from quarantine
order by sha256(convert_to(payload, 'UTF8')), source, id;

update quarantine q set payload_id = p.id
from quarantine_payloads p
where p.digest = sha256(convert_to(q.payload, 'UTF8')) and p.source = q.source;

drop index quarantine_once_idx;
alter table quarantine drop column payload_digest;
alter table quarantine drop column payload;
alter table quarantine drop column source;
alter table quarantine alter column payload_id set not null;
-- a message delivered again (QoS 1 is at least once) finds its refusals already kept
create unique index quarantine_once_idx on quarantine (payload_id, (coalesce(record_index, -1)))
  where replayed_at is null;

grant select, insert, delete on quarantine_payloads to energy_writer;
grant delete on quarantine to energy_writer;
grant usage on sequence quarantine_payloads_id_seq to energy_writer;
