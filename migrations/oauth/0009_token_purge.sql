-- Ended tokens are purged after a retention (plugins/database.ts): the purge finds them by when
-- they ended, through these indexes, in batches, instead of reading the whole table each time.
create index access_tokens_expires_idx on access_tokens (expires_at);
create index access_tokens_revoked_idx on access_tokens (revoked_at) where revoked_at is not null;
