-- A refresh token is issued with an access token and belongs where that access token belongs, so
-- it references only the access token and goes with it. Access tokens are never deleted on their
-- own (expired and revoked rows stay): one goes only with its user or its application, and its
-- refresh token with it. One foreign-key check per refresh token instead of three, on the path
-- of every exchange; the grant and the user/application revocations reach refresh tokens through
-- their access tokens, by the index the cascade needs anyway.
alter table refresh_tokens drop constraint refresh_tokens_user_id_fkey;
alter table refresh_tokens drop constraint refresh_tokens_application_id_fkey;
alter table refresh_tokens drop constraint refresh_tokens_access_token_id_fkey;
alter table refresh_tokens alter column access_token_id set not null;
alter table refresh_tokens
  add constraint refresh_tokens_access_token_id_fkey
  foreign key (access_token_id) references access_tokens (id) on delete cascade;
drop index refresh_tokens_grant_idx;
create index refresh_tokens_access_token_idx on refresh_tokens (access_token_id);
