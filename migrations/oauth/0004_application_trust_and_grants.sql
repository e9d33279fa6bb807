-- Only an instance-wide application (no owner) may skip the consent page: the owner of a
-- trusted application could otherwise point it anywhere and collect tokens without a question.
-- Applications trusted while owned by a user lose the flag.
update applications set trusted = false where trusted and owner_id is not null;
alter table applications
  add constraint applications_trusted_instance_wide check (not trusted or owner_id is null);

-- An application's grant list holds only grants this server knows; the password grant's
-- presence in it is the per-application switch (GitLab's ropc_enabled).
alter table applications
  add constraint applications_grant_types_known
  check (grant_types <@ array['authorization_code', 'implicit', 'password', 'refresh_token']::text[]);
