-- Measurement schema of the data API: metadata, the long per-meter table and one wide table
-- per group, all at 15-minute resolution. Timestamps are timestamptz (stored UTC); every
-- measurement is double precision and nullable (a missing reading is NULL, never 0).

create table dataloggers (
  id text primary key,
  description text,
  notes text,
  serial text not null,
  date_from timestamptz,
  date_to timestamptz,
  ip text not null
);

create table meters (
  id integer primary key,
  description text not null,
  notes text,
  date_from timestamptz,
  date_to timestamptz,
  datalogger_id text not null references dataloggers (id),
  type_id text,
  unit_id text,
  quantity_id text
);
create index meters_datalogger_idx on meters (datalogger_id);

-- One row per meter and quarter hour: statistics of the raw samples in that quarter hour.
create table data_15m (
  time_15m timestamptz not null,
  meter_id integer not null references meters (id),
  avg_value double precision,
  min_value double precision,
  max_value double precision,
  sum_value double precision,
  count_value integer,
  tag text not null default 'ok',
  primary key (meter_id, time_15m)
);
create index data_15m_time_idx on data_15m (time_15m);
create table datacenter_1_15m (
  time_15m timestamptz primary key,
  tot_dc double precision,
  tot_dc_aux double precision,
  tot_dc_gf double precision,
  tot_dc_i1 double precision,
  tot_dc_i1_cabina double precision,
  tot_dc_i1_it double precision,
  tot_dc_i1_vent double precision,
  tot_dc_i2 double precision,
  tot_dc_i2_it double precision,
  tot_dc_i2_vent double precision,
  tot_dc_i3 double precision,
  tot_dc_i3_it double precision,
  tot_dc_i3_vent double precision,
  tot_dc_it double precision,
  tot_dc_vent double precision
);
create table pv_15m (
  time_15m timestamptz primary key,
  tot_pv double precision,
  tot_pv_aule_p double precision,
  tot_pv_aule_p_i1 double precision,
  tot_pv_aule_p_i2 double precision,
  tot_pv_aule_r double precision,
  tot_pv_castelfidardo double precision,
  tot_pv_cit double precision,
  tot_pv_ec double precision,
  tot_pv_ec_inv1 double precision,
  tot_pv_ec_inv2 double precision,
  tot_pv_ec_inv3 double precision,
  tot_pv_ec_inv4 double precision,
  tot_pv_i3p double precision,
  tot_pv_i3p_est double precision,
  tot_pv_i3p_ovest double precision
);
create table water_15m (
  time_15m timestamptz primary key,
  tot_sede_centrale double precision,
  tot_font_aula_magna double precision,
  tot_font_aule_p double precision,
  tot_font_corr_denerg double precision,
  tot_font_corr_nord double precision,
  tot_font_corr_sud double precision
);
create table weather_15m (
  time_15m timestamptz primary key,
  atmospheric_pressure double precision,
  relative_humidity double precision,
  air_temperature double precision,
  global_solar_radiation double precision,
  diffuse_solar_radiation double precision,
  direct_solar_radiation double precision,
  horizontal_direct_solar_radiation double precision,
  illuminance double precision,
  total_rainfall double precision,
  wind_direction double precision,
  wind_speed double precision
);
create table centrali_frigo_15m (
  time_15m timestamptz primary key,
  cf1_tot double precision,
  cf1_gf3 double precision,
  cf2_gf3 double precision,
  cf2_gf2 double precision,
  cf2_gf1 double precision,
  cf2_aux1 double precision,
  cf2_aux2 double precision,
  cf2_tot double precision,
  cf3_tot double precision,
  cf3_gf3 double precision,
  cf3_gf2 double precision,
  cf3_gf1 double precision,
  castello_nuovo double precision,
  cittadella_gf5 double precision,
  cittadella_gf3 double precision,
  cittadella_gf4 double precision,
  cittadella_gf1 double precision,
  cittadella_gf2 double precision,
  nodo1_gf3 double precision,
  nodo1_tot double precision,
  energy_center double precision,
  cars double precision
);
create table aulep_15m (
  time_15m timestamptz primary key,
  surplus_pv double precision,
  consumo_aula_1p double precision,
  tot_pv_prod double precision,
  tot_pv_prod_legacy double precision,
  pv_inv_1 double precision,
  pv_inv_2 double precision,
  temp_celle_fv double precision,
  solarimetro double precision,
  rooftop_1 double precision,
  rooftop_2 double precision,
  rooftop_3 double precision,
  rooftop_4 double precision,
  rooftop_5 double precision,
  gen_qe_cdz double precision,
  gen_qe_ga double precision,
  fontana_h2o double precision
);
-- Hypertables where TimescaleDB is installed; plain tables (same queries) everywhere else.
do $$
begin
  if exists (select 1 from pg_available_extensions where name = 'timescaledb') then
    begin
      create extension if not exists timescaledb;
    exception when others then
      raise notice 'timescaledb is available but could not be created: %', sqlerrm;
    end;
  end if;
  if exists (select 1 from pg_extension where extname = 'timescaledb') then
    perform create_hypertable('data_15m', 'time_15m', chunk_time_interval => interval '7 days', migrate_data => true);
    perform create_hypertable('datacenter_1_15m', 'time_15m', chunk_time_interval => interval '30 days', migrate_data => true);
    perform create_hypertable('pv_15m', 'time_15m', chunk_time_interval => interval '30 days', migrate_data => true);
    perform create_hypertable('water_15m', 'time_15m', chunk_time_interval => interval '30 days', migrate_data => true);
    perform create_hypertable('weather_15m', 'time_15m', chunk_time_interval => interval '30 days', migrate_data => true);
    perform create_hypertable('centrali_frigo_15m', 'time_15m', chunk_time_interval => interval '30 days', migrate_data => true);
    perform create_hypertable('aulep_15m', 'time_15m', chunk_time_interval => interval '30 days', migrate_data => true);
  end if;
end
$$;
