-- A resource server (the energy data API) introspects the access tokens of every client
-- (RFC 7662 2.1: the protected resource asks), where an ordinary client may introspect only its
-- own. Only an instance-wide confidential application can be one: a user registering an
-- application must not learn about other people's tokens.
alter table applications add column resource_server boolean not null default false;
alter table applications
  add constraint applications_resource_server_instance_wide
  check (not resource_server or (owner_id is null and confidential));
