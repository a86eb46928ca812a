-- Attempts at guarded actions (sign-ins by address and by account, jot
-- passwords by jot and address), kept in the database so that every replica
-- enforces one limit. taken counts the attempts since the key was last
-- quiet; blocked_until, when set and in the future, refuses attempts until
-- then.

-- +goose Up
CREATE TABLE attempts (
    attempt_key   TEXT PRIMARY KEY,
    taken         INTEGER NOT NULL,
    last_at       INTEGER NOT NULL,
    blocked_until INTEGER
) STRICT;
CREATE INDEX attempts_last ON attempts (last_at);

-- +goose Down
DROP TABLE attempts;
