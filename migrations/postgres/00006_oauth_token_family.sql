-- OAuth grant families and scopes. Every code, access token and refresh
-- token descended from one authorization shares a family_id, so that a
-- replayed code or rotated refresh token revokes the whole family (OAuth 2.1
-- refresh token reuse detection). scope is the space-separated set granted.
-- A revoked credential keeps its row (revoked_at set) until it expires, so a
-- token minted by a concurrent exchange of the same family is refused too.
-- Rows from before this migration become families of one and keep the
-- "mcp" scope they effectively had.

-- +goose Up
ALTER TABLE oauth_tokens ADD COLUMN family_id TEXT NOT NULL DEFAULT '';
ALTER TABLE oauth_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT '';
ALTER TABLE oauth_tokens ADD COLUMN revoked_at TIMESTAMPTZ;
UPDATE oauth_tokens SET family_id = hash, scope = 'mcp';
CREATE INDEX oauth_tokens_family ON oauth_tokens (family_id);

-- +goose Down
DROP INDEX oauth_tokens_family;
ALTER TABLE oauth_tokens DROP COLUMN revoked_at;
ALTER TABLE oauth_tokens DROP COLUMN scope;
ALTER TABLE oauth_tokens DROP COLUMN family_id;
