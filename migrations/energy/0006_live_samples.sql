-- Live measurements: the samples dataloggers send (MQTT and HTTP, SenML), from which the quarter
-- hours of data_15m are folded, and the quarantine of what could not be taken.

-- 1. An energy or volume meter's quarter hour now holds the statistics of what its datalogger sent,
-- increments of the amount: sum_value is the quarter hour's amount (energy, volume), avg, min and
-- max describe the increments. Rows written before held the amount in avg_value; they are
-- rewritten so (the meters of that kind in the catalogue of this migration), and their rollups
-- recomputed. The days and months are built again by the service at its next start.
update data_15m set
  sum_value = avg_value,
  avg_value = case when count_value > 0 then avg_value / count_value end,
  min_value = case when count_value > 0 then min_value / count_value end,
  max_value = case when count_value > 0 then max_value / count_value end
where meter_id in (860, 870, 880, 890, 920, 921, 922);
delete from data_rollup where meter_id in (860, 870, 880, 890, 920, 921, 922);
insert into data_rollup (level, start, meter_id, tag, quarters, values_n, avg_sum, min_value, max_value, sum_value, count_value)
select 'hour', date_bin('1 hour', time_15m, timestamptz '2000-01-01 00:00:00+00'), meter_id, tag, count(*),
  count(sum_value), sum(sum_value), min(min_value), max(max_value), sum(sum_value), sum(count_value)
from data_15m where meter_id in (860, 870, 880, 890, 920, 921, 922) group by 2, 3, 4;
delete from rollup_calendar;
comment on column data_rollup.avg_sum is
  'sum of the quarter-hour values: avg_value of a mean-kind meter, sum_value of an energy or volume meter';

-- 2. Every sample taken, once: a meter's reading at an instant. A redelivered message or a replayed
-- sample finds its key taken and changes nothing. `reading` says what the value is: a reading of
-- the quantity (`value`; an energy or volume meter's increment) or its cumulative register
-- (`register`), both in the meter's catalogue unit.
create table meter_samples (
  meter_id integer not null references meters (id),
  at timestamptz not null,
  reading text not null check (reading in ('value', 'register')),
  value double precision not null,
  received_at timestamptz not null default now(),
  primary key (meter_id, at)
);

-- 3. What could not be taken, never lost: a record (its index in the pack) or a whole payload,
-- with the raw payload, why, and where it came from; once while it waits. Replayed once fixed (`pnpm energy
-- quarantine:replay`), it is marked so.
create table quarantine (
  id bigserial primary key,
  received_at timestamptz not null default now(),
  source text not null,
  -- the class of the reason (unknown_meter, unit, future, ...), as the ingest metrics count them
  code text not null,
  reason text not null,
  record_index integer,
  payload text not null,
  replayed_at timestamptz,
  -- a message delivered again (QoS 1 is at least once) finds its refusals already kept
  payload_digest text generated always as (md5(payload)) stored
);
create index quarantine_open_idx on quarantine (id) where replayed_at is null;
create unique index quarantine_once_idx on quarantine (payload_digest, (coalesce(record_index, -1)), source)
  where replayed_at is null;

-- 4. The ingest service writes measurements: a login role that is a member of `energy_writer` may
-- read everything and write the quarter hours, their rollups, the samples and the quarantine, and
-- nothing else (not the API keys but their bookkeeping, not the metadata).
do $$
begin
  create role energy_writer nologin;
exception
  when duplicate_object or unique_violation then null;
end
$$;
grant usage on schema public to energy_writer;
grant select on all tables in schema public to energy_writer;
grant insert, update, delete on data_15m, datacenter_1_15m, pv_15m, water_15m, weather_15m, centrali_frigo_15m,
  aulep_15m, data_rollup, datacenter_1_rollup, pv_rollup, water_rollup, weather_rollup, centrali_frigo_rollup,
  aulep_rollup, meter_samples, quarantine to energy_writer;
grant usage on sequence quarantine_id_seq to energy_writer;
grant update (last_used_at) on api_keys to energy_writer;
