-- When an unpublished jot's claim on its name lapses: the expiry of its
-- latest upload URL. A jot never published and without files is released
-- then (its row deleted), so names cannot be held without uploading. Claims
-- made before this migration lapse at their latest upload's expiry, or at
-- once when they never had one. Times are INTEGER microseconds since the
-- Unix epoch, UTC.

-- +goose Up
ALTER TABLE jots ADD COLUMN claim_until INTEGER;
UPDATE jots SET claim_until = COALESCE(
    (SELECT MAX(expires_at) FROM jot_uploads WHERE jot_uploads.jot_id = jots.id), created_at)
    WHERE published_at IS NULL;
CREATE INDEX jots_claims ON jots (claim_until) WHERE published_at IS NULL;

-- +goose Down
DROP INDEX jots_claims;
ALTER TABLE jots DROP COLUMN claim_until;
