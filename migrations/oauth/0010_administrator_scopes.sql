-- write_energy (writing measurements) is a scope an administrator gives, as GitLab keeps its
-- powerful scopes to administrators: an application holds it only when an administrator allowed
-- it (`administrator_scopes`), and a user's own application no longer can.
alter table applications add column administrator_scopes text[] not null default '{}';

-- the instance's applications, and an administrator's, keep it
update applications a set administrator_scopes = array['write_energy']
where 'write_energy' = any (scopes)
  and (owner_id is null or exists (select 1 from users u where u.id = a.owner_id and u.admin));

-- any other loses it, and the tokens holding it end
update access_tokens set revoked_at = now()
where revoked_at is null and 'write_energy' = any (scopes)
  and application_id in (select id from applications where 'write_energy' = any (scopes) and administrator_scopes = '{}');
update refresh_tokens set revoked_at = now()
where revoked_at is null and 'write_energy' = any (scopes)
  and application_id in (select id from applications where 'write_energy' = any (scopes) and administrator_scopes = '{}');
update applications set scopes = array_remove(scopes, 'write_energy')
where 'write_energy' = any (scopes) and administrator_scopes = '{}';

alter table applications add constraint applications_write_energy_by_administrator
  check (not ('write_energy' = any (scopes)) or 'write_energy' = any (administrator_scopes));
