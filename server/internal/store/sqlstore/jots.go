package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/workbench-dev/workbench/server/internal/store"
)

const jotCols = `id, name, tenant_id, user_id, access, password_hash, cors, cookie_key, version, file_count, total_bytes,
	published_at, claim_until, created_at, updated_at`

// jotReleased is the condition of a released claim (store.Jot.Released) at
// the time bound to its one placeholder.
const jotReleased = `published_at IS NULL AND file_count = 0 AND claim_until IS NOT NULL AND claim_until <= ?`

func scanJot(s scanner) (store.Jot, error) {
	var j store.Jot
	var access string
	err := s.Scan(&j.ID, &j.Name, &j.TenantID, &j.UserID, &access, &j.PasswordHash, &j.CORS, &j.CookieKey, &j.Version,
		&j.Files, &j.Bytes, timeCol{&j.PublishedAt}, timeCol{&j.ClaimUntil}, timeCol{&j.CreatedAt}, timeCol{&j.UpdatedAt})
	j.Access = store.JotAccess(access)
	return j, err
}

// CreateJot implements store.Store.
func (db *DB) CreateJot(ctx context.Context, nj store.NewJot) (store.Jot, error) {
	if err := store.CheckJotName(nj.Name); err != nil {
		return store.Jot{}, err
	}
	if err := store.CheckJotSettings(nj.JotSettings); err != nil {
		return store.Jot{}, err
	}
	now := db.now()
	j := store.Jot{ID: store.NewID(store.PrefixJot), Name: nj.Name, UserID: nj.UserID, JotSettings: nj.JotSettings,
		CookieKey: store.NewJotKey(), ClaimUntil: store.Round(nj.ClaimUntil), CreatedAt: now, UpdatedAt: now}
	err := db.inTx(ctx, fmt.Sprintf("creating jot %q", nj.Name), func(tx *sql.Tx) error {
		// The user's row, locked, serialises the user's claims.
		var err error
		if j.TenantID, err = db.lockUser(ctx, tx, j.UserID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, db.q(`DELETE FROM jots WHERE (name = ? OR user_id = ?) AND `+jotReleased),
			j.Name, j.UserID, db.t(now)); err != nil {
			return db.fail("releasing lapsed jot claims", err)
		}
		if max := nj.Quota.MaxJots; max > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, db.q(`SELECT COUNT(*) FROM jots WHERE user_id = ?`), j.UserID).Scan(&n); err != nil {
				return db.fail("counting jots", err)
			}
			if n >= max {
				return fmt.Errorf("store: the user holds %d jots, the limit of %d jots per user: %w", n, max, store.ErrJotQuota)
			}
		}
		_, err = tx.ExecContext(ctx, db.q(`INSERT INTO jots (id, name, tenant_id, user_id, access, password_hash, cors, cookie_key,
			claim_until, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			j.ID, j.Name, j.TenantID, j.UserID, string(j.Access), j.PasswordHash, j.CORS, j.CookieKey, db.t(j.ClaimUntil), db.t(now), db.t(now))
		if err != nil {
			return db.fail(fmt.Sprintf("creating jot %q", nj.Name), err)
		}
		return nil
	})
	if err != nil {
		return store.Jot{}, err
	}
	return j, nil
}

// Jot implements store.Store.
func (db *DB) Jot(ctx context.Context, name string) (store.Jot, error) {
	j, err := scanJot(db.read.QueryRowContext(ctx, db.q(`SELECT `+jotCols+` FROM jots WHERE name = ?`), name))
	if err != nil {
		return store.Jot{}, db.fail(fmt.Sprintf("jot %q", name), err)
	}
	return j, nil
}

// JotsOf implements store.Store.
func (db *DB) JotsOf(ctx context.Context, userID string) ([]store.Jot, error) {
	rows, err := db.read.QueryContext(ctx, db.q(`SELECT `+jotCols+` FROM jots WHERE user_id = ? ORDER BY name`), userID)
	if err != nil {
		return nil, db.fail("listing jots", err)
	}
	defer rows.Close()
	var out []store.Jot
	for rows.Next() {
		j, err := scanJot(rows)
		if err != nil {
			return nil, db.fail("listing jots", err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail("listing jots", err)
	}
	return out, nil
}

// DeleteJot implements store.Store.
func (db *DB) DeleteJot(ctx context.Context, userID, name string) error {
	res, err := db.write.ExecContext(ctx, db.q(`DELETE FROM jots WHERE name = ? AND user_id = ?`), name, userID)
	if err != nil {
		return db.fail(fmt.Sprintf("deleting jot %q", name), err)
	}
	return db.affected(res, fmt.Sprintf("deleting jot %q of user %q", name, userID))
}

const jotFileCols = `path, content_type, size, sha256, modified_at`

func scanJotFile(s scanner, extra ...any) (store.JotFile, error) {
	var f store.JotFile
	err := s.Scan(append([]any{&f.Path, &f.ContentType, &f.Size, &f.SHA256, timeCol{&f.ModifiedAt}}, extra...)...)
	return f, err
}

// JotFiles implements store.Store.
func (db *DB) JotFiles(ctx context.Context, jotID string) ([]store.JotFile, error) {
	rows, err := db.read.QueryContext(ctx, db.q(`SELECT `+jotFileCols+` FROM jot_files WHERE jot_id = ? ORDER BY path`), jotID)
	if err != nil {
		return nil, db.fail("listing jot files", err)
	}
	defer rows.Close()
	var out []store.JotFile
	for rows.Next() {
		f, err := scanJotFile(rows)
		if err != nil {
			return nil, db.fail("listing jot files", err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail("listing jot files", err)
	}
	return out, nil
}

// JotFile implements store.Store.
func (db *DB) JotFile(ctx context.Context, jotID, path string) (store.JotFile, []byte, error) {
	var data []byte
	f, err := scanJotFile(db.read.QueryRowContext(ctx, db.q(`SELECT `+jotFileCols+`, content FROM jot_files WHERE jot_id = ? AND path = ?`),
		jotID, path), &data)
	if err != nil {
		return store.JotFile{}, nil, db.fail(fmt.Sprintf("jot file %q", path), err)
	}
	if data == nil {
		data = []byte{}
	}
	return f, data, nil
}

const jotUploadCols = `token_hash, jot_id, user_id, access, password_hash, cors, created_at, expires_at, used_at`

func scanJotUpload(s scanner) (store.JotUpload, error) {
	var u store.JotUpload
	var access string
	err := s.Scan(&u.TokenHash, &u.JotID, &u.UserID, &access, &u.PasswordHash, &u.CORS,
		timeCol{&u.CreatedAt}, timeCol{&u.ExpiresAt}, timeCol{&u.UsedAt})
	u.Access = store.JotAccess(access)
	return u, err
}

// CreateJotUpload implements store.Store.
func (db *DB) CreateJotUpload(ctx context.Context, nu store.NewJotUpload) (store.JotUpload, error) {
	if err := store.CheckHash("upload token hash", nu.TokenHash); err != nil {
		return store.JotUpload{}, err
	}
	if err := store.CheckJotSettings(nu.JotSettings); err != nil {
		return store.JotUpload{}, err
	}
	if nu.ExpiresAt.IsZero() {
		return store.JotUpload{}, fmt.Errorf("%w: upload has no expiry", store.ErrInvalid)
	}
	u := store.JotUpload{TokenHash: nu.TokenHash, JotID: nu.JotID, UserID: nu.UserID, JotSettings: nu.JotSettings,
		CreatedAt: db.now(), ExpiresAt: store.Round(nu.ExpiresAt)}
	err := db.inTx(ctx, "creating a jot upload", func(tx *sql.Tx) error {
		// The jot must be the user's, and not a released claim (another
		// user may take its name at any moment).
		if _, err := tx.ExecContext(ctx, db.q(`UPDATE jots SET claim_until = ? WHERE id = ? AND user_id = ? AND NOT (`+jotReleased+`)
			AND published_at IS NULL AND claim_until < ?`), db.t(u.ExpiresAt), u.JotID, u.UserID, db.t(u.CreatedAt), db.t(u.ExpiresAt)); err != nil {
			return db.fail("extending a jot claim", err)
		}
		res, err := tx.ExecContext(ctx, db.q(`INSERT INTO jot_uploads (token_hash, jot_id, user_id, access, password_hash, cors,
			created_at, expires_at) SELECT ?, id, user_id, ?, ?, ?, ?, ? FROM jots WHERE id = ? AND user_id = ? AND NOT (`+jotReleased+`)`),
			u.TokenHash, string(u.Access), u.PasswordHash, u.CORS, db.t(u.CreatedAt), db.t(u.ExpiresAt), u.JotID, u.UserID, db.t(u.CreatedAt))
		if err != nil {
			return db.fail("creating a jot upload", err)
		}
		return db.affected(res, fmt.Sprintf("jot %q of user %q", nu.JotID, nu.UserID))
	})
	if err != nil {
		return store.JotUpload{}, err
	}
	return u, nil
}

// JotUpload implements store.Store.
func (db *DB) JotUpload(ctx context.Context, tokenHash string) (store.JotUpload, error) {
	if store.CheckHash("upload token hash", tokenHash) != nil {
		return store.JotUpload{}, fmt.Errorf("store: jot upload: %w", store.ErrNotFound)
	}
	u, err := scanJotUpload(db.read.QueryRowContext(ctx, db.q(`SELECT `+jotUploadCols+` FROM jot_uploads
		WHERE token_hash = ? AND used_at IS NULL`), tokenHash))
	if err != nil {
		return store.JotUpload{}, db.fail("jot upload (unknown or used)", err)
	}
	if !db.now().Before(u.ExpiresAt) {
		return store.JotUpload{}, fmt.Errorf("store: jot upload: %w", store.ErrExpired)
	}
	return u, nil
}

// PublishJot implements store.Store.
func (db *DB) PublishJot(ctx context.Context, tokenHash string, files []store.JotContent, lim store.JotLimits) (store.Jot, error) {
	if store.CheckHash("upload token hash", tokenHash) != nil {
		return store.Jot{}, fmt.Errorf("store: jot upload: %w", store.ErrNotFound)
	}
	if err := store.CheckJotContents(files, 0, 0, lim); err != nil {
		return store.Jot{}, err
	}
	if err := uniqueKeys(files); err != nil {
		return store.Jot{}, err
	}
	var out store.Jot
	err := db.inTx(ctx, "publishing a jot", func(tx *sql.Tx) error {
		now := db.now()
		u, err := scanJotUpload(tx.QueryRowContext(ctx, db.q(`UPDATE jot_uploads SET used_at = ?
			WHERE token_hash = ? AND used_at IS NULL RETURNING `+jotUploadCols), db.t(now), tokenHash))
		if err != nil {
			return db.fail("jot upload (unknown or used)", err)
		}
		if !now.Before(u.ExpiresAt) {
			return fmt.Errorf("store: jot upload: %w", store.ErrExpired)
		}
		// The user's row, then the jot's: every change to a user's jots
		// locks in this order (CreateJot locks the user's row only).
		if _, err := db.lockUser(ctx, tx, u.UserID); err != nil {
			return err
		}
		old, err := db.lockJot(ctx, tx, "id = ?", u.JotID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, db.q(`DELETE FROM jot_files WHERE jot_id = ?`), old.ID); err != nil {
			return db.fail("replacing jot files", err)
		}
		for _, f := range files {
			if err := db.insertJotFile(ctx, tx, old.ID, f, now); err != nil {
				return err
			}
		}
		out, err = db.finishJot(ctx, tx, old, &u.JotSettings, now, true, lim)
		return err
	})
	return out, err
}

// PatchJot implements store.Store.
func (db *DB) PatchJot(ctx context.Context, userID, name string, p store.JotPatch) (store.Jot, error) {
	if err := store.CheckJotContents(p.Put, 0, 0, store.JotLimits{MaxFiles: len(p.Put) + 1, MaxBytes: 1 << 62}); err != nil {
		return store.Jot{}, err
	}
	if err := uniqueKeys(p.Put); err != nil {
		return store.Jot{}, err
	}
	if p.Settings != nil {
		if err := store.CheckJotSettings(*p.Settings); err != nil {
			return store.Jot{}, err
		}
	}
	for _, d := range p.Delete {
		if err := store.CheckJotPath(d); err != nil {
			return store.Jot{}, err
		}
	}
	var out store.Jot
	err := db.inTx(ctx, fmt.Sprintf("patching jot %q", name), func(tx *sql.Tx) error {
		now := db.now()
		if _, err := db.lockUser(ctx, tx, userID); err != nil {
			return err
		}
		old, err := db.lockJot(ctx, tx, "name = ? AND user_id = ?", name, userID)
		if err != nil {
			return err
		}
		for _, d := range p.Delete {
			res, err := tx.ExecContext(ctx, db.q(`DELETE FROM jot_files WHERE jot_id = ? AND path = ?`), old.ID, d)
			if err != nil {
				return db.fail("deleting a jot file", err)
			}
			if err := db.affected(res, fmt.Sprintf("deleting file %q of jot %q", d, name)); err != nil {
				return err
			}
		}
		for _, f := range p.Put {
			if _, err := tx.ExecContext(ctx, db.q(`DELETE FROM jot_files WHERE jot_id = ? AND path = ?`), old.ID, f.Path); err != nil {
				return db.fail("replacing a jot file", err)
			}
			if err := db.insertJotFile(ctx, tx, old.ID, f, now); err != nil {
				return err
			}
		}
		out, err = db.finishJot(ctx, tx, old, p.Settings, now, false, p.Limits)
		return err
	})
	return out, err
}

// PruneJotUploads implements store.Store.
func (db *DB) PruneJotUploads(ctx context.Context) (int, error) {
	res, err := db.write.ExecContext(ctx, db.q(`DELETE FROM jot_uploads WHERE used_at IS NOT NULL OR expires_at <= ?`), db.t(db.now()))
	if err != nil {
		return 0, db.fail("pruning jot uploads", err)
	}
	return db.count(res, "pruning jot uploads")
}

// ReleaseJotClaims implements store.Store.
func (db *DB) ReleaseJotClaims(ctx context.Context) (int, error) {
	res, err := db.write.ExecContext(ctx, db.q(`DELETE FROM jots WHERE `+jotReleased), db.t(db.now()))
	if err != nil {
		return 0, db.fail("releasing lapsed jot claims", err)
	}
	return db.count(res, "releasing lapsed jot claims")
}

// lockJot bumps the version of the jot where cond holds and returns it, so
// that concurrent changes to one jot serialise on its row.
func (db *DB) lockJot(ctx context.Context, tx *sql.Tx, cond string, args ...any) (store.Jot, error) {
	j, err := scanJot(tx.QueryRowContext(ctx, db.q(`UPDATE jots SET version = version + 1 WHERE `+cond+` RETURNING `+jotCols), args...))
	if err != nil {
		return store.Jot{}, db.fail("jot (unknown or another user's)", err)
	}
	return j, nil
}

func (db *DB) insertJotFile(ctx context.Context, tx *sql.Tx, jotID string, f store.JotContent, now time.Time) error {
	sum := sha256.Sum256(f.Data)
	data := f.Data
	if data == nil {
		data = []byte{}
	}
	_, err := tx.ExecContext(ctx, db.q(`INSERT INTO jot_files (jot_id, path, path_key, content_type, size, sha256, content, modified_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`), jotID, f.Path, store.JotPathKey(f.Path), f.ContentType, int64(len(f.Data)),
		hex.EncodeToString(sum[:]), data, db.t(now))
	if err != nil {
		return db.fail(fmt.Sprintf("storing file %q (another path differs only in case?)", f.Path), err)
	}
	return nil
}

// finishJot recounts the locked jot's files, checks them against lim,
// applies settings (nil keeps them; a changed access or password hash
// rotates the cookie key) and writes the row back.
func (db *DB) finishJot(ctx context.Context, tx *sql.Tx, j store.Jot, settings *store.JotSettings, now time.Time, published bool,
	lim store.JotLimits) (store.Jot, error) {
	if err := tx.QueryRowContext(ctx, db.q(`SELECT COUNT(*), COALESCE(SUM(size), 0) FROM jot_files WHERE jot_id = ?`), j.ID).
		Scan(&j.Files, &j.Bytes); err != nil {
		return store.Jot{}, db.fail("counting jot files", err)
	}
	if err := store.CheckJotContents(nil, j.Files, j.Bytes, lim); err != nil {
		return store.Jot{}, fmt.Errorf("store: jot %q: %w", j.Name, err)
	}
	if max := lim.Quota.MaxBytes; max > 0 { // the caller locked the user's row
		var others int64
		if err := tx.QueryRowContext(ctx, db.q(`SELECT COALESCE(SUM(total_bytes), 0) FROM jots WHERE user_id = ? AND id <> ?`), j.UserID, j.ID).
			Scan(&others); err != nil {
			return store.Jot{}, db.fail("summing the user's jot bytes", err)
		}
		if total := others + j.Bytes; total > max {
			return store.Jot{}, fmt.Errorf("store: jot %q: the user's jots would hold %d bytes, over the limit of %d bytes per user: %w",
				j.Name, total, max, store.ErrJotQuota)
		}
	}
	if settings != nil {
		if settings.Access != j.Access || settings.PasswordHash != j.PasswordHash {
			j.CookieKey = store.NewJotKey()
		}
		j.JotSettings = *settings
	}
	if published {
		j.PublishedAt = now
	}
	j.UpdatedAt = now
	_, err := tx.ExecContext(ctx, db.q(`UPDATE jots SET access = ?, password_hash = ?, cors = ?, cookie_key = ?, file_count = ?,
		total_bytes = ?, published_at = ?, updated_at = ? WHERE id = ?`),
		string(j.Access), j.PasswordHash, j.CORS, j.CookieKey, j.Files, j.Bytes, db.t(j.PublishedAt), db.t(now), j.ID)
	if err != nil {
		return store.Jot{}, db.fail(fmt.Sprintf("updating jot %q", j.Name), err)
	}
	return j, nil
}

// uniqueKeys fails with ErrConflict when two files' paths are equal
// ignoring case.
func uniqueKeys(files []store.JotContent) error {
	seen := make(map[string]string, len(files))
	for _, f := range files {
		k := store.JotPathKey(f.Path)
		if prev, dup := seen[k]; dup {
			return fmt.Errorf("store: files %q and %q: paths equal ignoring case: %w", prev, f.Path, store.ErrConflict)
		}
		seen[k] = f.Path
	}
	return nil
}
