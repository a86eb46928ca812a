package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/workbench-dev/workbench/server"
)

// storeTimeout bounds one store command (migrate, user, token, keys).
const storeTimeout = 2 * time.Minute

// withAdmin reads the configuration from the environment, opens the store
// and runs fn with it; it reports failures for the command named name.
func withAdmin(e *env, name string, fn func(ctx context.Context, a *server.Admin) error) int {
	cfg, err := server.ConfigFromEnv(e.getenv)
	if err != nil {
		return commandFailed(e, name, err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, storeTimeout)
	defer cancel()
	a, err := server.OpenAdmin(ctx, cfg)
	if err != nil {
		return commandFailed(e, name, err)
	}
	err = fn(ctx, a)
	if cerr := a.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return commandFailed(e, name, err)
	}
	return exitOK
}

func migrateCommand() *command {
	return &command{
		name:    "migrate",
		summary: "Apply the database migrations to the store DATABASE_URL (or DATA_DIR, for\nSQLite) selects, and print the schema version. serve also migrates at start.",
		setup: func(*flag.FlagSet) func(*env, []string) int {
			return func(e *env, args []string) int {
				if len(args) > 0 {
					fmt.Fprintf(e.stderr, "workbench migrate: unexpected argument %q (migrate is configured by environment variables)\n", args[0])
					return exitUsage
				}
				cfg, err := server.ConfigFromEnv(e.getenv)
				if err != nil {
					return commandFailed(e, "migrate", err)
				}
				ctx, cancel := context.WithTimeout(e.ctx, storeTimeout)
				defer cancel()
				v, err := server.Migrate(ctx, cfg)
				if err != nil {
					return commandFailed(e, "migrate", err)
				}
				fmt.Fprintf(e.stdout, "schema version %d (%s)\n", v, server.DescribeStore(cfg))
				return exitOK
			}
		},
	}
}

func userAddCommand() *command {
	return &command{
		name:     "user add",
		synopsis: "--email E [--admin]",
		summary:  "Create a user with a first API token and print the token as the last line\n(it is shown only now). Sign the user in to the portal with 'user login-link'.",
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			email := fs.String("email", "", "the user's email (required)")
			admin := fs.Bool("admin", false, "make the user an administrator")
			return func(e *env, args []string) int {
				if *email == "" || len(args) > 0 {
					return usageError(e, fs, "want --email and no arguments")
				}
				return withAdmin(e, "user add", func(ctx context.Context, a *server.Admin) error {
					u, token, err := a.AddUser(ctx, *email, *admin)
					if err != nil {
						return err
					}
					role := "user"
					if u.IsAdmin {
						role = "admin"
					}
					fmt.Fprintf(e.stdout, "created %s %s (%s); its API token, shown only now:\n%s\n", role, u.Email, u.ID, token)
					return nil
				})
			}
		},
	}
}

func userLoginLinkCommand() *command {
	return &command{
		name:     "user login-link",
		synopsis: "--email E",
		summary:  "Print a one-time portal sign-in link for a user as the last line. It works\nonce, for 15 minutes; the user can then set a password on the account page.",
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			email := fs.String("email", "", "the user's email (required)")
			return func(e *env, args []string) int {
				if *email == "" || len(args) > 0 {
					return usageError(e, fs, "want --email and no arguments")
				}
				return withAdmin(e, "user login-link", func(ctx context.Context, a *server.Admin) error {
					link, expires, err := a.LoginLink(ctx, *email)
					if err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "one-time sign-in link for %s, valid until %s:\n%s\n", *email, expires.Local().Format("15:04 MST"), link)
					return nil
				})
			}
		},
	}
}

func tokenCreateCommand() *command {
	return &command{
		name:     "token create",
		synopsis: "--email E [--name N]",
		summary:  "Mint an API token for a user and print it as the last line (it is shown\nonly now).",
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			email := fs.String("email", "", "the user's email (required)")
			name := fs.String("name", "cli", "a name to recognise the token by")
			return func(e *env, args []string) int {
				if *email == "" || len(args) > 0 {
					return usageError(e, fs, "want --email and no arguments")
				}
				return withAdmin(e, "token create", func(ctx context.Context, a *server.Admin) error {
					t, token, err := a.CreateToken(ctx, *email, *name)
					if err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "created token %s (%q) for %s; shown only now:\n%s\n", t.ID, t.Name, *email, token)
					return nil
				})
			}
		},
	}
}

func tokenRevokeCommand() *command {
	return &command{
		name:     "token revoke",
		synopsis: "--email E TOKEN_ID",
		summary:  "Revoke one of a user's API tokens by its id (tok_...; the portal's account\npage lists them). Revoking twice is not an error.",
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			email := fs.String("email", "", "the token owner's email (required)")
			return func(e *env, args []string) int {
				if *email == "" || len(args) != 1 {
					return usageError(e, fs, "want --email and exactly one TOKEN_ID")
				}
				return withAdmin(e, "token revoke", func(ctx context.Context, a *server.Admin) error {
					if err := a.RevokeToken(ctx, *email, args[0]); err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "revoked token %s of %s\n", args[0], *email)
					return nil
				})
			}
		},
	}
}

func keysRotateCommand() *command {
	return &command{
		name: "keys rotate",
		summary: "Re-seal every stored credential under the current encryption key. Without\n" +
			"ENCRYPTION_KEY, first replace the key generated in DATA_DIR with a new one (the\n" +
			"old one stays in DATA_DIR/encryption.old-keys). With ENCRYPTION_KEY, set the new\n" +
			"key there and the previous ones in ENCRYPTION_KEYS_OLD. Restart running servers\n" +
			"afterwards and run it once more.",
		setup: func(*flag.FlagSet) func(*env, []string) int {
			return func(e *env, args []string) int {
				if len(args) > 0 {
					fmt.Fprintf(e.stderr, "workbench keys rotate: unexpected argument %q\n", args[0])
					return exitUsage
				}
				return withAdmin(e, "keys rotate", func(ctx context.Context, a *server.Admin) error {
					r, err := a.RotateKeys(ctx)
					if r.Generated {
						fmt.Fprintf(e.stdout, "generated a new key %s in DATA_DIR; the previous key stays in the old-keys file\n", r.KeyID)
					}
					if err != nil {
						return fmt.Errorf("re-sealed %d connection(s) before failing: %w", r.Resealed, err)
					}
					fmt.Fprintf(e.stdout, "re-sealed %d connection(s) under key %s\n", r.Resealed, r.KeyID)
					return nil
				})
			}
		},
	}
}
