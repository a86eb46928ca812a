-- Curl sessions (short-lived tokens for the authenticated proxy at
-- /c/<integration>/<path>) and the proxy's audit log. Only the SHA-256 of a
-- curl token is kept. Durations are BIGINT microseconds.

-- +goose Up
CREATE TABLE curl_sessions (
    id           TEXT PRIMARY KEY,
    token_hash   TEXT NOT NULL UNIQUE,
    tenant_id    TEXT NOT NULL REFERENCES tenants (id),
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    integrations TEXT NOT NULL, -- sorted names, one a line
    prefix       TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    expires_at   TIMESTAMPTZ NOT NULL,
    revoked_at   TIMESTAMPTZ
);
CREATE INDEX curl_sessions_user ON curl_sessions (user_id);
CREATE INDEX curl_sessions_expires ON curl_sessions (expires_at);

CREATE TABLE proxy_calls (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id   TEXT NOT NULL REFERENCES tenants (id),
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    session_id  TEXT NOT NULL, -- kept after the session is pruned
    integration TEXT NOT NULL,
    method      TEXT NOT NULL,
    path        TEXT NOT NULL,
    status      INTEGER NOT NULL,
    bytes_in    BIGINT NOT NULL,
    bytes_out   BIGINT NOT NULL,
    duration_us BIGINT NOT NULL,
    error       TEXT NOT NULL DEFAULT '',
    at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX proxy_calls_user ON proxy_calls (user_id, id);
CREATE INDEX proxy_calls_tenant ON proxy_calls (tenant_id, id);
CREATE INDEX proxy_calls_at ON proxy_calls (at);

-- +goose Down
DROP TABLE proxy_calls;
DROP TABLE curl_sessions;
