package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/workbench-dev/workbench/server/internal/store"
)

const customAppCols = `id, tenant_id, user_id, name, url, auth, created_at`

func scanCustomApp(s scanner) (store.CustomApp, error) {
	var a store.CustomApp
	err := s.Scan(&a.ID, &a.TenantID, &a.UserID, &a.Name, &a.URL, &a.Auth, timeCol{&a.CreatedAt})
	return a, err
}

// CreateCustomApp implements store.CustomAppStore.
func (db *DB) CreateCustomApp(ctx context.Context, na store.NewCustomApp, cred *store.Connection) (store.CustomApp, error) {
	if err := store.CheckNewCustomApp(na, cred); err != nil {
		return store.CustomApp{}, err
	}
	doing := fmt.Sprintf("creating app %q of user %q", na.Name, na.UserID)
	var out store.CustomApp
	err := db.inTx(ctx, doing, func(tx *sql.Tx) error {
		tenant, err := db.tenantOf(ctx, tx, na.UserID)
		if err != nil {
			return err
		}
		out, err = scanCustomApp(tx.QueryRowContext(ctx, db.q(`INSERT INTO custom_apps (`+customAppCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING `+customAppCols),
			na.ID, tenant, na.UserID, na.Name, na.URL, na.Auth, db.t(db.now())))
		if err != nil {
			return db.fail(doing, err)
		}
		if cred != nil {
			_, err = db.putConnection(ctx, tx, *cred)
		}
		return err
	})
	if err != nil {
		return store.CustomApp{}, err
	}
	return out, nil
}

// CustomApps implements store.CustomAppStore.
func (db *DB) CustomApps(ctx context.Context, userID string) ([]store.CustomApp, error) {
	rows, err := db.read.QueryContext(ctx, db.q(`SELECT `+customAppCols+` FROM custom_apps WHERE user_id = ? ORDER BY name`), userID)
	if err != nil {
		return nil, db.fail("listing apps", err)
	}
	defer rows.Close()
	var out []store.CustomApp
	for rows.Next() {
		a, err := scanCustomApp(rows)
		if err != nil {
			return nil, db.fail("listing apps", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail("listing apps", err)
	}
	return out, nil
}

// DeleteCustomApp implements store.CustomAppStore.
func (db *DB) DeleteCustomApp(ctx context.Context, userID, name string) (store.CustomApp, error) {
	doing := fmt.Sprintf("deleting app %q of user %q", name, userID)
	var out store.CustomApp
	err := db.inTx(ctx, doing, func(tx *sql.Tx) error {
		var err error
		out, err = scanCustomApp(tx.QueryRowContext(ctx, db.q(`DELETE FROM custom_apps WHERE user_id = ? AND name = ?
			RETURNING `+customAppCols), userID, name))
		if err != nil {
			return db.fail(doing, err)
		}
		if _, err := tx.ExecContext(ctx, db.q(`DELETE FROM connections WHERE user_id = ? AND integration = ?`), userID, out.ID); err != nil {
			return db.fail(doing, err)
		}
		return nil
	})
	if err != nil {
		return store.CustomApp{}, err
	}
	return out, nil
}
