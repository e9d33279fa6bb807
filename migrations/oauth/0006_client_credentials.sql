-- client_credentials (RFC 6749 4.4): an application's own access tokens, with no user. Only a
-- confidential application may have the grant switched on (4.4: confidential clients only), and a
-- token without a user always belongs to an application.
alter table access_tokens alter column user_id drop not null;
alter table access_tokens
  add constraint access_tokens_user_or_application check (user_id is not null or application_id is not null);

alter table applications drop constraint applications_grant_types_known;
alter table applications
  add constraint applications_grant_types_known
  check (grant_types <@ array['authorization_code', 'implicit', 'password', 'refresh_token', 'client_credentials']::text[]);
alter table applications
  add constraint applications_client_credentials_confidential
  check (confidential or not ('client_credentials' = any (grant_types)));
