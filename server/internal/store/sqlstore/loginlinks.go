package sqlstore

import (
	"context"
	"fmt"

	"github.com/workbench-dev/workbench/server/internal/store"
)

const loginLinkCols = `token_hash, tenant_id, user_id, created_at, expires_at, used_at`

func scanLoginLink(s scanner) (store.LoginLink, error) {
	var l store.LoginLink
	err := s.Scan(&l.TokenHash, &l.TenantID, &l.UserID, timeCol{&l.CreatedAt}, timeCol{&l.ExpiresAt}, timeCol{&l.UsedAt})
	return l, err
}

// CreateLoginLink implements store.Store.
func (db *DB) CreateLoginLink(ctx context.Context, nl store.NewLoginLink) (store.LoginLink, error) {
	if err := store.CheckNewLoginLink(&nl); err != nil {
		return store.LoginLink{}, err
	}
	l := store.LoginLink{TokenHash: nl.TokenHash, UserID: nl.UserID, CreatedAt: db.now(), ExpiresAt: nl.ExpiresAt}
	var err error
	if l.TenantID, err = db.tenantOf(ctx, db.read, l.UserID); err != nil {
		return store.LoginLink{}, err
	}
	_, err = db.write.ExecContext(ctx, db.q(`INSERT INTO login_links (token_hash, tenant_id, user_id, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?)`),
		l.TokenHash, l.TenantID, l.UserID, db.t(l.CreatedAt), db.t(l.ExpiresAt))
	if err != nil {
		return store.LoginLink{}, db.fail(fmt.Sprintf("creating login link for user %q", nl.UserID), err)
	}
	return l, nil
}

// ConsumeLoginLink implements store.Store.
func (db *DB) ConsumeLoginLink(ctx context.Context, tokenHash string) (store.LoginLink, error) {
	if err := store.CheckHash("login link hash", tokenHash); err != nil {
		return store.LoginLink{}, fmt.Errorf("store: login link: %w", store.ErrNotFound)
	}
	now := db.now()
	l, err := scanLoginLink(db.write.QueryRowContext(ctx, db.q(`UPDATE login_links SET used_at = ?
		WHERE token_hash = ? AND used_at IS NULL
		RETURNING `+loginLinkCols), db.t(now), tokenHash))
	if err != nil {
		return store.LoginLink{}, db.fail("login link (unknown or already used)", err)
	}
	if !now.Before(l.ExpiresAt) {
		return store.LoginLink{}, fmt.Errorf("store: login link of user %q: %w", l.UserID, store.ErrExpired)
	}
	return l, nil
}

// PruneLoginLinks implements store.Store.
func (db *DB) PruneLoginLinks(ctx context.Context) (int, error) {
	res, err := db.write.ExecContext(ctx, db.q(`DELETE FROM login_links WHERE used_at IS NOT NULL OR expires_at <= ?`), db.t(db.now()))
	if err != nil {
		return 0, db.fail("pruning login links", err)
	}
	return db.count(res, "pruning login links")
}
