-- The data API is read-only at runtime: deployments connect it with a login role that is a
-- member of `energy_reader`, which may read every table and touch only the API keys'
-- `last_used_at` bookkeeping, so a bug in the service cannot change a measurement.
-- Roles belong to the whole server: another database may have created it already.
do $$
begin
  create role energy_reader nologin;
exception
  when duplicate_object or unique_violation then null;
end
$$;

grant usage on schema public to energy_reader;
grant select on all tables in schema public to energy_reader;
grant update (last_used_at) on api_keys to energy_reader;
-- tables added by later migrations are readable too
alter default privileges in schema public grant select on tables to energy_reader;
