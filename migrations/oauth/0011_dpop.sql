-- DPoP (RFC 9449): a token bound to the client's key carries that key's JWK SHA-256 thumbprint
-- (RFC 7638, base64url, 43 characters); a resource server then asks for a proof signed by it.
-- A code requested with dpop_jkt (or through a pushed request sent with a proof) is redeemed only
-- with a proof of that key.
alter table access_tokens add column dpop_jkt text check (length(dpop_jkt) = 43);
alter table refresh_tokens add column dpop_jkt text check (length(dpop_jkt) = 43);
alter table authorization_codes add column dpop_jkt text check (length(dpop_jkt) = 43);
