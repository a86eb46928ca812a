package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/workbench-dev/workbench/server"
)

func appAddCommand() *command {
	return &command{
		name:     "app add",
		synopsis: "--email E --name N --url U [--auth none|manual] [--bearer TOKEN]",
		summary: "Add a custom app for a user: their own MCP server (streamable HTTP) at URL,\n" +
			"whose tools they then see as N__<tool>. --auth manual sends --bearer as\n" +
			"'Authorization: Bearer' to the app (sealed at rest like connections).",
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			email := fs.String("email", "", "the user's email (required)")
			name := fs.String("name", "", "the app's name: 2 to 31 of a-z, 0-9 and '-', starting with a letter (required)")
			url := fs.String("url", "", "the MCP endpoint, http(s) (required)")
			auth := fs.String("auth", "none", "none, or manual with --bearer")
			bearer := fs.String("bearer", "", "the bearer token of a manual app")
			return func(e *env, args []string) int {
				if *email == "" || *name == "" || *url == "" || len(args) > 0 {
					return usageError(e, fs, "want --email, --name, --url and no arguments")
				}
				return withAdmin(e, "app add", func(ctx context.Context, a *server.Admin) error {
					app, err := a.AddApp(ctx, *email, server.NewApp{Name: *name, URL: *url, Auth: *auth, Bearer: *bearer})
					if err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "added app %s (%s, auth %s) for %s; its tools are %s__<tool>\n", app.Name, app.ID, app.Auth, *email, app.Name)
					return nil
				})
			}
		},
	}
}

func appLsCommand() *command {
	return &command{
		name:     "app ls",
		synopsis: "--email E",
		summary:  "List a user's custom apps: name, auth and URL.",
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			email := fs.String("email", "", "the user's email (required)")
			return func(e *env, args []string) int {
				if *email == "" || len(args) > 0 {
					return usageError(e, fs, "want --email and no arguments")
				}
				return withAdmin(e, "app ls", func(ctx context.Context, a *server.Admin) error {
					apps, err := a.Apps(ctx, *email)
					if err != nil {
						return err
					}
					w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
					fmt.Fprintln(w, "NAME\tAUTH\tURL")
					for _, app := range apps {
						fmt.Fprintf(w, "%s\t%s\t%s\n", app.Name, app.Auth, app.URL)
					}
					return w.Flush()
				})
			}
		},
	}
}

func appRmCommand() *command {
	return &command{
		name:     "app rm",
		synopsis: "--email E --name N",
		summary:  "Remove one of a user's custom apps and its stored credential.",
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			email := fs.String("email", "", "the user's email (required)")
			name := fs.String("name", "", "the app's name (required)")
			return func(e *env, args []string) int {
				if *email == "" || *name == "" || len(args) > 0 {
					return usageError(e, fs, "want --email, --name and no arguments")
				}
				return withAdmin(e, "app rm", func(ctx context.Context, a *server.Admin) error {
					if err := a.RemoveApp(ctx, *email, *name); err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "removed app %s of %s\n", *name, *email)
					return nil
				})
			}
		},
	}
}
