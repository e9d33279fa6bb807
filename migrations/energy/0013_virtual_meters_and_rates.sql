-- Virtual meters, and the tariffs and emission factors that price and weigh every quarter hour.

-- 1. A virtual meter is a meter (its quarter hours live in data_15m, its rollups in data_rollup,
-- so every read serves it as any meter) whose quarter hours are a linear combination of other
-- meters' quarter hours, written by the one write path whenever an input's are. It is read by no
-- datalogger: its `datalogger_id` is null (the API shows it empty, as for the next meter's id).
alter table meters alter column datalogger_id drop not null;

create table virtual_meters (
  id integer primary key references meters (id),
  -- as the operator gave it, normalised: `860 - 861 - 862`, `0.5*900 + 901`
  formula text not null,
  -- the series catalogue's kind of every input (energy, volume, power...): the virtual meter's
  -- kind, which says whether its quarter-hour value is an amount (sum_value) or a mean (avg_value)
  kind text not null,
  created_at timestamptz not null default now()
);

create table virtual_meter_terms (
  virtual_id integer not null references virtual_meters (id) on delete cascade,
  input_id integer not null references meters (id),
  coefficient double precision not null,
  primary key (virtual_id, input_id)
);
-- the write path asks, for the meters it wrote, which virtual meters they feed
create index virtual_meter_terms_input_idx on virtual_meter_terms (input_id);

-- 2. Tariffs and emission factors, one version per import (`pnpm energy tariffs:import`,
-- `emissions:import`), never rewritten: a quarter hour is priced (weighed) by the newest version
-- whose span holds it, so a new import changes no period outside its own span and a correction
-- is a new import. Local dates and times are those of `zone`, the estate's zone at the import.
create table rate_versions (
  id integer generated always as identity primary key,
  kind text not null check (kind in ('tariff', 'emission')),
  file text not null,
  zone text not null,
  -- a tariff's currency (one per import); an emission factor is kg CO2e per unit
  currency text,
  imported_at timestamptz not null default now(),
  check ((kind = 'tariff') = (currency is not null))
);

-- A band: from `valid_from` to `valid_to` (local dates, [from, to)), on `days`, from `from_minute`
-- to `to_minute` of the local day ([from, to), 1440 the end of the day), `value` per unit of the
-- commodity (electricity: kWh, water: m3). An emission factor by validity is a band of every day.
create table rate_bands (
  version_id integer not null references rate_versions (id),
  commodity text not null check (commodity in ('electricity', 'water')),
  valid_from date not null,
  valid_to date not null,
  days text not null check (days in ('mon-fri', 'sat', 'sun', 'all')),
  from_minute integer not null,
  to_minute integer not null,
  value double precision not null
);
create index rate_bands_version_idx on rate_bands (version_id);

-- An hourly series of emission factors: `value` holds from `start` for one hour.
create table rate_hours (
  version_id integer not null references rate_versions (id),
  commodity text not null check (commodity in ('electricity', 'water')),
  start timestamptz not null,
  value double precision not null,
  primary key (version_id, commodity, start)
);

-- The data API reads all of it; the ingest service's write path reads the virtual meters (it
-- writes their quarter hours when it writes an input's) and nothing of the rates.
grant select on virtual_meters, virtual_meter_terms, rate_versions, rate_bands, rate_hours to energy_reader;
grant select on virtual_meters, virtual_meter_terms to energy_writer;
