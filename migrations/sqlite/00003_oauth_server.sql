-- Workbench's own OAuth 2.1 authorization server for MCP clients: clients
-- registered dynamically (RFC 7591, public clients only) and the codes,
-- access tokens and refresh tokens issued to them. Only the SHA-256 of a
-- code or token is kept. Times are INTEGER microseconds since the Unix
-- epoch, UTC.

-- +goose Up
CREATE TABLE oauth_clients (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    redirect_uris TEXT NOT NULL, -- one URI a line
    created_at    INTEGER NOT NULL
) STRICT;

CREATE TABLE oauth_tokens (
    hash           TEXT PRIMARY KEY,
    kind           TEXT NOT NULL CHECK (kind IN ('code', 'access', 'refresh')),
    tenant_id      TEXT NOT NULL REFERENCES tenants (id),
    user_id        TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id      TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    resource       TEXT NOT NULL,
    redirect_uri   TEXT NOT NULL DEFAULT '', -- codes only
    code_challenge TEXT NOT NULL DEFAULT '', -- codes only
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    used_at        INTEGER
) STRICT;
CREATE INDEX oauth_tokens_user ON oauth_tokens (user_id);
CREATE INDEX oauth_tokens_client ON oauth_tokens (client_id);
CREATE INDEX oauth_tokens_expires ON oauth_tokens (expires_at);

-- +goose Down
DROP TABLE oauth_tokens;
DROP TABLE oauth_clients;
