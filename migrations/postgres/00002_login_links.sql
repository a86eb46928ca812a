-- One-time portal sign-in links (the first admin's link, `workbench user
-- login-link`). Only the SHA-256 of a link's token is kept; a link is used at
-- most once.

-- +goose Up
CREATE TABLE login_links (
    token_hash TEXT PRIMARY KEY,
    tenant_id  TEXT NOT NULL REFERENCES tenants (id),
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    used_at    TIMESTAMPTZ
);
CREATE INDEX login_links_user ON login_links (user_id);
CREATE INDEX login_links_expires ON login_links (expires_at);

-- +goose Down
DROP TABLE login_links;
