-- Custom apps: each user's own external MCP servers (streamable HTTP),
-- whose tools the meta-tools show to that user as <app>__<tool>. Names are
-- unique per user. A manual credential (a bearer token) is not kept here:
-- it is sealed in connections under the app's id (integration = id), and
-- deleting the app deletes it in the same transaction. Times are INTEGER
-- microseconds since the Unix epoch, UTC.

-- +goose Up
CREATE TABLE custom_apps (
    id         TEXT PRIMARY KEY,
    tenant_id  TEXT NOT NULL REFERENCES tenants (id),
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    url        TEXT NOT NULL,
    auth       TEXT NOT NULL CHECK (auth IN ('none', 'manual')),
    created_at INTEGER NOT NULL,
    UNIQUE (user_id, name)
) STRICT;

-- +goose Down
DROP TABLE custom_apps;
