-- The write path's cost follows the samples written, not the history:
-- 1. meter_samples is partitioned by month of `at`, so an index probe touches one month and an old
--    month can be detached (or dropped) without touching the others. Partitions are made as
--    samples need them, by ensure_sample_partition (the writer's role may not create tables).
-- 2. meter_latest holds each meter's last sample and last register reading: a register reading
--    that follows the last one is folded from it, without reading the samples again.
-- 3. meters.live_from: live samples before it are refused, so that a late sample never rewrites a
--    quarter hour a seed or an import wrote (they move it past what they write).
-- 4. data_15m.live: the row holds the statistics of its samples (true: new samples extend it), or
--    was written otherwise (false: a seed, an import; null: before this migration - new samples
--    fold it again from its samples).

alter table meter_samples rename to meter_samples_unpartitioned;
alter table meter_samples_unpartitioned rename constraint meter_samples_pkey to meter_samples_unpartitioned_pkey;

create table meter_samples (
  meter_id integer not null,
  at timestamptz not null,
  reading text not null check (reading in ('value', 'register')),
  value double precision not null,
  received_at timestamptz not null default now(),
  primary key (meter_id, at)
) partition by range (at);

-- The partition holding `month` (any instant of it, in UTC), made when missing. Two writers making
-- the same one at once: the second finds it made.
create function ensure_sample_partition(month timestamptz) returns text
language plpgsql security definer set search_path = public set timezone to 'UTC' as $$
declare
  first timestamptz := date_trunc('month', month);
  name text := 'meter_samples_p' || to_char(first, 'YYYYMM');
begin
  if to_regclass(name) is null then
    begin
      execute format('create table %I partition of meter_samples for values from (%L) to (%L)',
        name, first, first + interval '1 month');
    exception when duplicate_table or unique_violation then null;
    end;
  end if;
  return name;
end
$$;
revoke all on function ensure_sample_partition(timestamptz) from public;

-- The months wholly before `before` are detached and dropped: the raw samples of a retention
-- policy (INGEST_SAMPLES_RETENTION_DAYS). Their quarter hours stay. Returns the names dropped.
create function drop_sample_partitions_before(before timestamptz) returns setof text
language plpgsql security definer set search_path = public set timezone to 'UTC' as $$
declare
  part record;
begin
  for part in
    select c.relname
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'meter_samples'::regclass and c.relname ~ '^meter_samples_p[0-9]{6}$'
  loop
    if to_timestamp(substring(part.relname from '[0-9]{6}$'), 'YYYYMM') + interval '1 month' <= before then
      execute format('alter table meter_samples detach partition %I', part.relname);
      execute format('drop table %I', part.relname);
      return next part.relname;
    end if;
  end loop;
end
$$;
revoke all on function drop_sample_partitions_before(timestamptz) from public;

do $$
declare
  m timestamptz;
begin
  for m in
    select distinct date_trunc('month', at at time zone 'UTC') at time zone 'UTC' from meter_samples_unpartitioned
  loop
    perform ensure_sample_partition(m);
  end loop;
end
$$;
insert into meter_samples (meter_id, at, reading, value, received_at)
select meter_id, at, reading, value, received_at from meter_samples_unpartitioned;
drop table meter_samples_unpartitioned;

create table meter_latest (
  meter_id integer primary key,
  -- the latest sample by its time, and when the latest sample of any time arrived
  at timestamptz not null,
  value double precision not null,
  reading text not null,
  received_at timestamptz not null,
  -- the latest register reading (an energy or volume meter's cumulative register), if any
  register_at timestamptz,
  register_value double precision
);
insert into meter_latest (meter_id, at, value, reading, received_at, register_at, register_value)
select l.meter_id, l.at, l.value, l.reading, r.received_at, g.at, g.value
from (select distinct on (meter_id) meter_id, at, value, reading from meter_samples order by meter_id, at desc) l
join (select meter_id, max(received_at) as received_at from meter_samples group by meter_id) r using (meter_id)
left join (
  select distinct on (meter_id) meter_id, at, value from meter_samples where reading = 'register'
  order by meter_id, at desc
) g using (meter_id);

alter table data_15m add column live boolean;

alter table meters add column live_from timestamptz;
-- where quarter hours were written without samples (a seed, an import), live samples start after them
update meters m set live_from = w.last + interval '15 minutes'
from (
  select d.meter_id, max(d.time_15m) as last
  from data_15m d
  left join (select meter_id, min(at) as first from meter_samples group by meter_id) f using (meter_id)
  -- before a meter's first sample nothing was live; after it, the quarter hours without samples
  where f.first is null
     or d.time_15m < date_bin('15 minutes', f.first, timestamptz '2000-01-01 00:00:00+00')
     or not exists (
       select 1 from meter_samples s
       where s.meter_id = d.meter_id and s.at >= d.time_15m and s.at < d.time_15m + interval '15 minutes'
     )
  group by d.meter_id
) w
where w.meter_id = m.id;

grant select, insert on meter_samples to energy_writer;
grant select, insert, update on meter_latest to energy_writer;
grant execute on function ensure_sample_partition(timestamptz) to energy_writer;
grant execute on function drop_sample_partitions_before(timestamptz) to energy_writer;
