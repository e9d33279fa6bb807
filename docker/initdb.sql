-- One server, one database per service (each service owns its data).
create database oauth;
create database energy;
-- The data API connects as energy_api: a member of energy_reader, which the energy migrations
-- allow to read everything and write only API-key bookkeeping.
create role energy_reader nologin;
create role energy_api login password 'energy_api' in role energy_reader;
-- The ingest service connects as energy_ingest: a member of energy_writer, which the energy
-- migrations allow to write measurements, their rollups, samples and the quarantine only.
create role energy_writer nologin;
create role energy_ingest login password 'energy_ingest' in role energy_writer;
