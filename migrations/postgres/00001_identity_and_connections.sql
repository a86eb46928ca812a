-- Identity (tenants, users, API tokens, portal sessions) and connections
-- (stored credentials and pending connect handshakes).

-- +goose Up
CREATE TABLE tenants (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

INSERT INTO tenants (id, name) VALUES ('default', 'Default');

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    tenant_id     TEXT NOT NULL REFERENCES tenants (id),
    email         TEXT NOT NULL,
    email_key     TEXT NOT NULL,
    password_hash TEXT NOT NULL DEFAULT '',
    is_admin      BOOLEAN NOT NULL DEFAULT false,
    created_at    TIMESTAMPTZ NOT NULL,
    UNIQUE (tenant_id, email_key)
);

CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants (id),
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    prefix       TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    last_used_at TIMESTAMPTZ,
    revoked_at   TIMESTAMPTZ
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);

CREATE TABLE sessions (
    id_hash     TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL REFERENCES tenants (id),
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_secret TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expires ON sessions (expires_at);

CREATE TABLE connections (
    id             TEXT PRIMARY KEY,
    tenant_id      TEXT NOT NULL REFERENCES tenants (id),
    user_id        TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    integration    TEXT NOT NULL,
    mode           TEXT NOT NULL,
    sealed         BYTEA NOT NULL,
    sealed_refresh BYTEA,
    key_id         TEXT NOT NULL,
    expires_at     TIMESTAMPTZ,
    status         TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'failed')),
    reason         TEXT NOT NULL DEFAULT '',
    created_at     TIMESTAMPTZ NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL,
    UNIQUE (user_id, integration)
);
CREATE INDEX connections_key ON connections (key_id);

CREATE TABLE pending_connections (
    id              TEXT PRIMARY KEY,
    tenant_id       TEXT NOT NULL REFERENCES tenants (id),
    user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    integration     TEXT NOT NULL,
    mode            TEXT NOT NULL,
    state_hash      TEXT NOT NULL UNIQUE,
    state_used_at   TIMESTAMPTZ,
    sealed_verifier BYTEA,
    key_id          TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL DEFAULT 'PENDING'
                    CHECK (status IN ('PENDING', 'CONNECTED', 'EXPIRED', 'FAILED')),
    reason          TEXT NOT NULL DEFAULT '',
    created_at      TIMESTAMPTZ NOT NULL,
    expires_at      TIMESTAMPTZ NOT NULL,
    terminal_at     TIMESTAMPTZ
);
CREATE INDEX pending_connections_user ON pending_connections (user_id);
CREATE INDEX pending_connections_status_expires ON pending_connections (status, expires_at);
CREATE INDEX pending_connections_terminal ON pending_connections (terminal_at);

-- +goose Down
DROP TABLE pending_connections;
DROP TABLE connections;
DROP TABLE sessions;
DROP TABLE api_tokens;
DROP TABLE users;
DROP TABLE tenants;
