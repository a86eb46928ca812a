-- Jots: static sites agents deploy, served at /j/<name>/. Names are global.
-- Files live here (content as BLOB) so every replica serves every jot.
-- Upload tokens are single-use; only their SHA-256 is kept. Times are
-- INTEGER microseconds since the Unix epoch, UTC.

-- +goose Up
CREATE TABLE jots (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    tenant_id     TEXT NOT NULL REFERENCES tenants (id),
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    access        TEXT NOT NULL CHECK (access IN ('public', 'password')),
    password_hash TEXT NOT NULL DEFAULT '',
    cors          INTEGER NOT NULL DEFAULT 0 CHECK (cors IN (0, 1)),
    cookie_key    BLOB NOT NULL,             -- HMAC key of unlock cookies
    version       INTEGER NOT NULL DEFAULT 0, -- bumped by every change
    file_count    INTEGER NOT NULL DEFAULT 0,
    total_bytes   INTEGER NOT NULL DEFAULT 0,
    published_at  INTEGER,                   -- NULL until the first upload
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
) STRICT;
CREATE INDEX jots_user ON jots (user_id);

CREATE TABLE jot_files (
    jot_id       TEXT NOT NULL REFERENCES jots (id) ON DELETE CASCADE,
    path         TEXT NOT NULL,
    path_key     TEXT NOT NULL, -- the path lower-cased: unique ignoring case
    content_type TEXT NOT NULL,
    size         INTEGER NOT NULL,
    sha256       TEXT NOT NULL,
    content      BLOB NOT NULL,
    modified_at  INTEGER NOT NULL,
    PRIMARY KEY (jot_id, path),
    UNIQUE (jot_id, path_key)
) STRICT;

CREATE TABLE jot_uploads (
    token_hash    TEXT PRIMARY KEY,
    jot_id        TEXT NOT NULL REFERENCES jots (id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    access        TEXT NOT NULL CHECK (access IN ('public', 'password')),
    password_hash TEXT NOT NULL DEFAULT '',
    cors          INTEGER NOT NULL DEFAULT 0 CHECK (cors IN (0, 1)),
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    used_at       INTEGER
) STRICT;
CREATE INDEX jot_uploads_jot ON jot_uploads (jot_id);
CREATE INDEX jot_uploads_expires ON jot_uploads (expires_at);

-- +goose Down
DROP TABLE jot_uploads;
DROP TABLE jot_files;
DROP TABLE jots;
