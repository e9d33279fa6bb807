-- One server, one database per service (each service owns its data).
create database oauth;
create database energy;
