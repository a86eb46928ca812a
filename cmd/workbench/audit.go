package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/workbench-dev/workbench/server"
)

// auditProxyCommand lists the proxy's audit log for operators.
func auditProxyCommand() *command {
	return &command{
		name:     "audit proxy",
		synopsis: "[--email E] [--integration I] [--limit N] [--before ID] [--json]",
		summary: "List the calls curl sessions made through the proxy at /c/, newest first: time,\n" +
			"user, integration, method, path (query values removed), status, bytes and\n" +
			"duration. Bodies and credentials are never recorded.",
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			email := fs.String("email", "", "only this user's calls")
			integration := fs.String("integration", "", "only calls to this integration")
			limit := fs.Int("limit", 100, "at most this many calls (1 to 1000)")
			before := fs.Int64("before", 0, "only calls older than the call with this id (paging)")
			asJSON := fs.Bool("json", false, "print one JSON object per line")
			return func(e *env, args []string) int {
				if len(args) > 0 || *limit < 1 || *limit > 1000 || *before < 0 {
					return usageError(e, fs, "want no arguments, --limit from 1 to 1000 and a non-negative --before")
				}
				return withAdmin(e, "audit proxy", func(ctx context.Context, a *server.Admin) error {
					calls, err := a.ProxyCalls(ctx, *email, *integration, *limit, *before)
					if err != nil {
						return err
					}
					if *asJSON {
						enc := json.NewEncoder(e.stdout)
						for _, c := range calls {
							if err := enc.Encode(c); err != nil {
								return err
							}
						}
						return nil
					}
					w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(w, "ID\tTIME\tUSER\tINTEGRATION\tMETHOD\tPATH\tSTATUS\tIN\tOUT\tDURATION\tERROR")
					for _, c := range calls {
						fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", c.ID, c.At.UTC().Format(time.RFC3339), c.UserEmail,
							c.Integration, c.Method, c.Path, c.Status, c.BytesIn, c.BytesOut, c.Duration.Round(time.Microsecond), c.Error)
					}
					return w.Flush()
				})
			}
		},
	}
}
