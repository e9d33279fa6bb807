-- Rollups of the 15-minute tables: per series and period, what every aggregate of an hour or more
-- is made of (how many quarter hours hold a row, and per value the count, sum, min and max of what
-- they hold), so that a bucket of a day or a month costs its rollups, not its quarter hours. Three
-- levels: `hour` (UTC hours: any zone whose offset is a whole number of hours is made of them), and
-- `day` and `month` (the local days and months of one zone, the one named in rollup_calendar, the
-- service's ENERGY_TIMEZONE). Kept by the one write path (repositories/measurement-writes.ts) in
-- the same transaction as the quarter hours they sum. The hours are filled here from what is
-- stored; days and months when the service first starts (it knows its zone), with progress.

create table rollup_calendar (
  -- one row: the zone of the day and month levels; none until the service has built them
  singleton boolean primary key default true check (singleton),
  zone text not null
);

create table data_rollup (
  level text not null check (level in ('hour', 'day', 'month')),
  start timestamptz not null,
  meter_id integer not null,
  -- the tag filter of /data/meters selects rollup rows: one row per tag present in the period
  tag text not null,
  quarters integer not null,
  values_n integer not null,
  avg_sum double precision,
  min_value double precision,
  max_value double precision,
  sum_value double precision,
  count_value bigint,
  primary key (level, meter_id, start, tag)
);
insert into data_rollup (level, start, meter_id, tag, quarters, values_n, avg_sum, min_value, max_value, sum_value, count_value)
select 'hour', date_bin('1 hour', time_15m, timestamptz '2000-01-01 00:00:00+00'), meter_id, tag, count(*),
  count(avg_value), sum(avg_value), min(min_value), max(max_value), sum(sum_value), sum(count_value)
from data_15m group by 2, 3, 4;

create table datacenter_1_rollup (
  level text not null check (level in ('hour', 'day', 'month')),
  start timestamptz not null,
  quarters integer not null,
  tot_dc_n integer not null,
  tot_dc_sum double precision,
  tot_dc_aux_n integer not null,
  tot_dc_aux_sum double precision,
  tot_dc_gf_n integer not null,
  tot_dc_gf_sum double precision,
  tot_dc_i1_n integer not null,
  tot_dc_i1_sum double precision,
  tot_dc_i1_cabina_n integer not null,
  tot_dc_i1_cabina_sum double precision,
  tot_dc_i1_it_n integer not null,
  tot_dc_i1_it_sum double precision,
  tot_dc_i1_vent_n integer not null,
  tot_dc_i1_vent_sum double precision,
  tot_dc_i2_n integer not null,
  tot_dc_i2_sum double precision,
  tot_dc_i2_it_n integer not null,
  tot_dc_i2_it_sum double precision,
  tot_dc_i2_vent_n integer not null,
  tot_dc_i2_vent_sum double precision,
  tot_dc_i3_n integer not null,
  tot_dc_i3_sum double precision,
  tot_dc_i3_it_n integer not null,
  tot_dc_i3_it_sum double precision,
  tot_dc_i3_vent_n integer not null,
  tot_dc_i3_vent_sum double precision,
  tot_dc_it_n integer not null,
  tot_dc_it_sum double precision,
  tot_dc_vent_n integer not null,
  tot_dc_vent_sum double precision,
  primary key (level, start)
);
insert into datacenter_1_rollup (level, start, quarters, tot_dc_n, tot_dc_sum, tot_dc_aux_n, tot_dc_aux_sum, tot_dc_gf_n, tot_dc_gf_sum, tot_dc_i1_n, tot_dc_i1_sum, tot_dc_i1_cabina_n, tot_dc_i1_cabina_sum, tot_dc_i1_it_n, tot_dc_i1_it_sum, tot_dc_i1_vent_n, tot_dc_i1_vent_sum, tot_dc_i2_n, tot_dc_i2_sum, tot_dc_i2_it_n, tot_dc_i2_it_sum, tot_dc_i2_vent_n, tot_dc_i2_vent_sum, tot_dc_i3_n, tot_dc_i3_sum, tot_dc_i3_it_n, tot_dc_i3_it_sum, tot_dc_i3_vent_n, tot_dc_i3_vent_sum, tot_dc_it_n, tot_dc_it_sum, tot_dc_vent_n, tot_dc_vent_sum)
select 'hour', date_bin('1 hour', time_15m, timestamptz '2000-01-01 00:00:00+00'), count(*), count(tot_dc), sum(tot_dc), count(tot_dc_aux), sum(tot_dc_aux), count(tot_dc_gf), sum(tot_dc_gf), count(tot_dc_i1), sum(tot_dc_i1), count(tot_dc_i1_cabina), sum(tot_dc_i1_cabina), count(tot_dc_i1_it), sum(tot_dc_i1_it), count(tot_dc_i1_vent), sum(tot_dc_i1_vent), count(tot_dc_i2), sum(tot_dc_i2), count(tot_dc_i2_it), sum(tot_dc_i2_it), count(tot_dc_i2_vent), sum(tot_dc_i2_vent), count(tot_dc_i3), sum(tot_dc_i3), count(tot_dc_i3_it), sum(tot_dc_i3_it), count(tot_dc_i3_vent), sum(tot_dc_i3_vent), count(tot_dc_it), sum(tot_dc_it), count(tot_dc_vent), sum(tot_dc_vent)
from datacenter_1_15m group by 2;

create table pv_rollup (
  level text not null check (level in ('hour', 'day', 'month')),
  start timestamptz not null,
  quarters integer not null,
  tot_pv_n integer not null,
  tot_pv_sum double precision,
  tot_pv_aule_p_n integer not null,
  tot_pv_aule_p_sum double precision,
  tot_pv_aule_p_i1_n integer not null,
  tot_pv_aule_p_i1_sum double precision,
  tot_pv_aule_p_i2_n integer not null,
  tot_pv_aule_p_i2_sum double precision,
  tot_pv_aule_r_n integer not null,
  tot_pv_aule_r_sum double precision,
  tot_pv_castelfidardo_n integer not null,
  tot_pv_castelfidardo_sum double precision,
  tot_pv_cit_n integer not null,
  tot_pv_cit_sum double precision,
  tot_pv_ec_n integer not null,
  tot_pv_ec_sum double precision,
  tot_pv_ec_inv1_n integer not null,
  tot_pv_ec_inv1_sum double precision,
  tot_pv_ec_inv2_n integer not null,
  tot_pv_ec_inv2_sum double precision,
  tot_pv_ec_inv3_n integer not null,
  tot_pv_ec_inv3_sum double precision,
  tot_pv_ec_inv4_n integer not null,
  tot_pv_ec_inv4_sum double precision,
  tot_pv_i3p_n integer not null,
  tot_pv_i3p_sum double precision,
  tot_pv_i3p_est_n integer not null,
  tot_pv_i3p_est_sum double precision,
  tot_pv_i3p_ovest_n integer not null,
  tot_pv_i3p_ovest_sum double precision,
  primary key (level, start)
);
insert into pv_rollup (level, start, quarters, tot_pv_n, tot_pv_sum, tot_pv_aule_p_n, tot_pv_aule_p_sum, tot_pv_aule_p_i1_n, tot_pv_aule_p_i1_sum, tot_pv_aule_p_i2_n, tot_pv_aule_p_i2_sum, tot_pv_aule_r_n, tot_pv_aule_r_sum, tot_pv_castelfidardo_n, tot_pv_castelfidardo_sum, tot_pv_cit_n, tot_pv_cit_sum, tot_pv_ec_n, tot_pv_ec_sum, tot_pv_ec_inv1_n, tot_pv_ec_inv1_sum, tot_pv_ec_inv2_n, tot_pv_ec_inv2_sum, tot_pv_ec_inv3_n, tot_pv_ec_inv3_sum, tot_pv_ec_inv4_n, tot_pv_ec_inv4_sum, tot_pv_i3p_n, tot_pv_i3p_sum, tot_pv_i3p_est_n, tot_pv_i3p_est_sum, tot_pv_i3p_ovest_n, tot_pv_i3p_ovest_sum)
select 'hour', date_bin('1 hour', time_15m, timestamptz '2000-01-01 00:00:00+00'), count(*), count(tot_pv), sum(tot_pv), count(tot_pv_aule_p), sum(tot_pv_aule_p), count(tot_pv_aule_p_i1), sum(tot_pv_aule_p_i1), count(tot_pv_aule_p_i2), sum(tot_pv_aule_p_i2), count(tot_pv_aule_r), sum(tot_pv_aule_r), count(tot_pv_castelfidardo), sum(tot_pv_castelfidardo), count(tot_pv_cit), sum(tot_pv_cit), count(tot_pv_ec), sum(tot_pv_ec), count(tot_pv_ec_inv1), sum(tot_pv_ec_inv1), count(tot_pv_ec_inv2), sum(tot_pv_ec_inv2), count(tot_pv_ec_inv3), sum(tot_pv_ec_inv3), count(tot_pv_ec_inv4), sum(tot_pv_ec_inv4), count(tot_pv_i3p), sum(tot_pv_i3p), count(tot_pv_i3p_est), sum(tot_pv_i3p_est), count(tot_pv_i3p_ovest), sum(tot_pv_i3p_ovest)
from pv_15m group by 2;

create table water_rollup (
  level text not null check (level in ('hour', 'day', 'month')),
  start timestamptz not null,
  quarters integer not null,
  tot_sede_centrale_n integer not null,
  tot_sede_centrale_sum double precision,
  tot_font_aula_magna_n integer not null,
  tot_font_aula_magna_sum double precision,
  tot_font_aule_p_n integer not null,
  tot_font_aule_p_sum double precision,
  tot_font_corr_denerg_n integer not null,
  tot_font_corr_denerg_sum double precision,
  tot_font_corr_nord_n integer not null,
  tot_font_corr_nord_sum double precision,
  tot_font_corr_sud_n integer not null,
  tot_font_corr_sud_sum double precision,
  primary key (level, start)
);
insert into water_rollup (level, start, quarters, tot_sede_centrale_n, tot_sede_centrale_sum, tot_font_aula_magna_n, tot_font_aula_magna_sum, tot_font_aule_p_n, tot_font_aule_p_sum, tot_font_corr_denerg_n, tot_font_corr_denerg_sum, tot_font_corr_nord_n, tot_font_corr_nord_sum, tot_font_corr_sud_n, tot_font_corr_sud_sum)
select 'hour', date_bin('1 hour', time_15m, timestamptz '2000-01-01 00:00:00+00'), count(*), count(tot_sede_centrale), sum(tot_sede_centrale), count(tot_font_aula_magna), sum(tot_font_aula_magna), count(tot_font_aule_p), sum(tot_font_aule_p), count(tot_font_corr_denerg), sum(tot_font_corr_denerg), count(tot_font_corr_nord), sum(tot_font_corr_nord), count(tot_font_corr_sud), sum(tot_font_corr_sud)
from water_15m group by 2;

create table weather_rollup (
  level text not null check (level in ('hour', 'day', 'month')),
  start timestamptz not null,
  quarters integer not null,
  atmospheric_pressure_n integer not null,
  atmospheric_pressure_sum double precision,
  relative_humidity_n integer not null,
  relative_humidity_sum double precision,
  air_temperature_n integer not null,
  air_temperature_sum double precision,
  global_solar_radiation_n integer not null,
  global_solar_radiation_sum double precision,
  diffuse_solar_radiation_n integer not null,
  diffuse_solar_radiation_sum double precision,
  direct_solar_radiation_n integer not null,
  direct_solar_radiation_sum double precision,
  horizontal_direct_solar_radiation_n integer not null,
  horizontal_direct_solar_radiation_sum double precision,
  illuminance_n integer not null,
  illuminance_sum double precision,
  total_rainfall_n integer not null,
  total_rainfall_sum double precision,
  wind_direction_n integer not null,
  wind_direction_sum double precision,
  wind_speed_n integer not null,
  wind_speed_sum double precision,
  primary key (level, start)
);
insert into weather_rollup (level, start, quarters, atmospheric_pressure_n, atmospheric_pressure_sum, relative_humidity_n, relative_humidity_sum, air_temperature_n, air_temperature_sum, global_solar_radiation_n, global_solar_radiation_sum, diffuse_solar_radiation_n, diffuse_solar_radiation_sum, direct_solar_radiation_n, direct_solar_radiation_sum, horizontal_direct_solar_radiation_n, horizontal_direct_solar_radiation_sum, illuminance_n, illuminance_sum, total_rainfall_n, total_rainfall_sum, wind_direction_n, wind_direction_sum, wind_speed_n, wind_speed_sum)
select 'hour', date_bin('1 hour', time_15m, timestamptz '2000-01-01 00:00:00+00'), count(*), count(atmospheric_pressure), sum(atmospheric_pressure), count(relative_humidity), sum(relative_humidity), count(air_temperature), sum(air_temperature), count(global_solar_radiation), sum(global_solar_radiation), count(diffuse_solar_radiation), sum(diffuse_solar_radiation), count(direct_solar_radiation), sum(direct_solar_radiation), count(horizontal_direct_solar_radiation), sum(horizontal_direct_solar_radiation), count(illuminance), sum(illuminance), count(total_rainfall), sum(total_rainfall), count(wind_direction), sum(wind_direction), count(wind_speed), sum(wind_speed)
from weather_15m group by 2;

create table centrali_frigo_rollup (
  level text not null check (level in ('hour', 'day', 'month')),
  start timestamptz not null,
  quarters integer not null,
  cf1_tot_n integer not null,
  cf1_tot_sum double precision,
  cf1_gf3_n integer not null,
  cf1_gf3_sum double precision,
  cf2_gf3_n integer not null,
  cf2_gf3_sum double precision,
  cf2_gf2_n integer not null,
  cf2_gf2_sum double precision,
  cf2_gf1_n integer not null,
  cf2_gf1_sum double precision,
  cf2_aux1_n integer not null,
  cf2_aux1_sum double precision,
  cf2_aux2_n integer not null,
  cf2_aux2_sum double precision,
  cf2_tot_n integer not null,
  cf2_tot_sum double precision,
  cf3_tot_n integer not null,
  cf3_tot_sum double precision,
  cf3_gf3_n integer not null,
  cf3_gf3_sum double precision,
  cf3_gf2_n integer not null,
  cf3_gf2_sum double precision,
  cf3_gf1_n integer not null,
  cf3_gf1_sum double precision,
  castello_nuovo_n integer not null,
  castello_nuovo_sum double precision,
  cittadella_gf5_n integer not null,
  cittadella_gf5_sum double precision,
  cittadella_gf3_n integer not null,
  cittadella_gf3_sum double precision,
  cittadella_gf4_n integer not null,
  cittadella_gf4_sum double precision,
  cittadella_gf1_n integer not null,
  cittadella_gf1_sum double precision,
  cittadella_gf2_n integer not null,
  cittadella_gf2_sum double precision,
  nodo1_gf3_n integer not null,
  nodo1_gf3_sum double precision,
  nodo1_tot_n integer not null,
  nodo1_tot_sum double precision,
  energy_center_n integer not null,
  energy_center_sum double precision,
  cars_n integer not null,
  cars_sum double precision,
  primary key (level, start)
);
insert into centrali_frigo_rollup (level, start, quarters, cf1_tot_n, cf1_tot_sum, cf1_gf3_n, cf1_gf3_sum, cf2_gf3_n, cf2_gf3_sum, cf2_gf2_n, cf2_gf2_sum, cf2_gf1_n, cf2_gf1_sum, cf2_aux1_n, cf2_aux1_sum, cf2_aux2_n, cf2_aux2_sum, cf2_tot_n, cf2_tot_sum, cf3_tot_n, cf3_tot_sum, cf3_gf3_n, cf3_gf3_sum, cf3_gf2_n, cf3_gf2_sum, cf3_gf1_n, cf3_gf1_sum, castello_nuovo_n, castello_nuovo_sum, cittadella_gf5_n, cittadella_gf5_sum, cittadella_gf3_n, cittadella_gf3_sum, cittadella_gf4_n, cittadella_gf4_sum, cittadella_gf1_n, cittadella_gf1_sum, cittadella_gf2_n, cittadella_gf2_sum, nodo1_gf3_n, nodo1_gf3_sum, nodo1_tot_n, nodo1_tot_sum, energy_center_n, energy_center_sum, cars_n, cars_sum)
select 'hour', date_bin('1 hour', time_15m, timestamptz '2000-01-01 00:00:00+00'), count(*), count(cf1_tot), sum(cf1_tot), count(cf1_gf3), sum(cf1_gf3), count(cf2_gf3), sum(cf2_gf3), count(cf2_gf2), sum(cf2_gf2), count(cf2_gf1), sum(cf2_gf1), count(cf2_aux1), sum(cf2_aux1), count(cf2_aux2), sum(cf2_aux2), count(cf2_tot), sum(cf2_tot), count(cf3_tot), sum(cf3_tot), count(cf3_gf3), sum(cf3_gf3), count(cf3_gf2), sum(cf3_gf2), count(cf3_gf1), sum(cf3_gf1), count(castello_nuovo), sum(castello_nuovo), count(cittadella_gf5), sum(cittadella_gf5), count(cittadella_gf3), sum(cittadella_gf3), count(cittadella_gf4), sum(cittadella_gf4), count(cittadella_gf1), sum(cittadella_gf1), count(cittadella_gf2), sum(cittadella_gf2), count(nodo1_gf3), sum(nodo1_gf3), count(nodo1_tot), sum(nodo1_tot), count(energy_center), sum(energy_center), count(cars), sum(cars)
from centrali_frigo_15m group by 2;

create table aulep_rollup (
  level text not null check (level in ('hour', 'day', 'month')),
  start timestamptz not null,
  quarters integer not null,
  surplus_pv_n integer not null,
  surplus_pv_sum double precision,
  consumo_aula_1p_n integer not null,
  consumo_aula_1p_sum double precision,
  tot_pv_prod_n integer not null,
  tot_pv_prod_sum double precision,
  tot_pv_prod_legacy_n integer not null,
  tot_pv_prod_legacy_sum double precision,
  pv_inv_1_n integer not null,
  pv_inv_1_sum double precision,
  pv_inv_2_n integer not null,
  pv_inv_2_sum double precision,
  temp_celle_fv_n integer not null,
  temp_celle_fv_sum double precision,
  solarimetro_n integer not null,
  solarimetro_sum double precision,
  rooftop_1_n integer not null,
  rooftop_1_sum double precision,
  rooftop_2_n integer not null,
  rooftop_2_sum double precision,
  rooftop_3_n integer not null,
  rooftop_3_sum double precision,
  rooftop_4_n integer not null,
  rooftop_4_sum double precision,
  rooftop_5_n integer not null,
  rooftop_5_sum double precision,
  gen_qe_cdz_n integer not null,
  gen_qe_cdz_sum double precision,
  gen_qe_ga_n integer not null,
  gen_qe_ga_sum double precision,
  fontana_h2o_n integer not null,
  fontana_h2o_sum double precision,
  primary key (level, start)
);
insert into aulep_rollup (level, start, quarters, surplus_pv_n, surplus_pv_sum, consumo_aula_1p_n, consumo_aula_1p_sum, tot_pv_prod_n, tot_pv_prod_sum, tot_pv_prod_legacy_n, tot_pv_prod_legacy_sum, pv_inv_1_n, pv_inv_1_sum, pv_inv_2_n, pv_inv_2_sum, temp_celle_fv_n, temp_celle_fv_sum, solarimetro_n, solarimetro_sum, rooftop_1_n, rooftop_1_sum, rooftop_2_n, rooftop_2_sum, rooftop_3_n, rooftop_3_sum, rooftop_4_n, rooftop_4_sum, rooftop_5_n, rooftop_5_sum, gen_qe_cdz_n, gen_qe_cdz_sum, gen_qe_ga_n, gen_qe_ga_sum, fontana_h2o_n, fontana_h2o_sum)
select 'hour', date_bin('1 hour', time_15m, timestamptz '2000-01-01 00:00:00+00'), count(*), count(surplus_pv), sum(surplus_pv), count(consumo_aula_1p), sum(consumo_aula_1p), count(tot_pv_prod), sum(tot_pv_prod), count(tot_pv_prod_legacy), sum(tot_pv_prod_legacy), count(pv_inv_1), sum(pv_inv_1), count(pv_inv_2), sum(pv_inv_2), count(temp_celle_fv), sum(temp_celle_fv), count(solarimetro), sum(solarimetro), count(rooftop_1), sum(rooftop_1), count(rooftop_2), sum(rooftop_2), count(rooftop_3), sum(rooftop_3), count(rooftop_4), sum(rooftop_4), count(rooftop_5), sum(rooftop_5), count(gen_qe_cdz), sum(gen_qe_cdz), count(gen_qe_ga), sum(gen_qe_ga), count(fontana_h2o), sum(fontana_h2o)
from aulep_15m group by 2;

