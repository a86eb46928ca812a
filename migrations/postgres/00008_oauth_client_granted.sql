-- When an OAuth client was first issued an access token. A client that
-- never was, created more than a day ago and holding no code, is deleted by
-- the authorization server's sweep, so registrations that went nowhere do
-- not pile up. Clients that already hold an access or refresh token count
-- as granted from their creation.

-- +goose Up
ALTER TABLE oauth_clients ADD COLUMN granted_at TIMESTAMPTZ;
UPDATE oauth_clients SET granted_at = created_at WHERE EXISTS (
    SELECT 1 FROM oauth_tokens WHERE oauth_tokens.client_id = oauth_clients.id AND oauth_tokens.kind IN ('access', 'refresh'));
CREATE INDEX oauth_clients_ungranted ON oauth_clients (created_at) WHERE granted_at IS NULL;

-- +goose Down
DROP INDEX oauth_clients_ungranted;
ALTER TABLE oauth_clients DROP COLUMN granted_at;
