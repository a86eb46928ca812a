-- Curl sessions (short-lived tokens for the authenticated proxy at
-- /c/<integration>/<path>) and the proxy's audit log. Only the SHA-256 of a
-- curl token is kept. Times are INTEGER microseconds since the Unix epoch,
-- UTC; durations are INTEGER microseconds.

-- +goose Up
CREATE TABLE curl_sessions (
    id           TEXT PRIMARY KEY,
    token_hash   TEXT NOT NULL UNIQUE,
    tenant_id    TEXT NOT NULL REFERENCES tenants (id),
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    integrations TEXT NOT NULL, -- sorted names, one a line
    prefix       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    revoked_at   INTEGER
) STRICT;
CREATE INDEX curl_sessions_user ON curl_sessions (user_id);
CREATE INDEX curl_sessions_expires ON curl_sessions (expires_at);

CREATE TABLE proxy_calls (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id   TEXT NOT NULL REFERENCES tenants (id),
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    session_id  TEXT NOT NULL, -- kept after the session is pruned
    integration TEXT NOT NULL,
    method      TEXT NOT NULL,
    path        TEXT NOT NULL,
    status      INTEGER NOT NULL,
    bytes_in    INTEGER NOT NULL,
    bytes_out   INTEGER NOT NULL,
    duration_us INTEGER NOT NULL,
    error       TEXT NOT NULL DEFAULT '',
    at          INTEGER NOT NULL
) STRICT;
CREATE INDEX proxy_calls_user ON proxy_calls (user_id, id);
CREATE INDEX proxy_calls_tenant ON proxy_calls (tenant_id, id);
CREATE INDEX proxy_calls_at ON proxy_calls (at);

-- +goose Down
DROP TABLE proxy_calls;
DROP TABLE curl_sessions;
