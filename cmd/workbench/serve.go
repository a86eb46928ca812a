package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/workbench-dev/workbench/server"
)

func serveCommand() *command {
	return &command{
		name:    "serve",
		summary: "Run the Workbench server until SIGINT or SIGTERM. It is configured by\nenvironment variables (LISTEN_ADDR, DATA_DIR, PLUGINS_DIR, ...; see README.md).",
		setup: func(*flag.FlagSet) func(*env, []string) int {
			return serve
		},
	}
}

func serve(e *env, args []string) int {
	if len(args) > 0 {
		fmt.Fprintf(e.stderr, "workbench serve: unexpected argument %q (serve is configured by environment variables)\n", args[0])
		return exitUsage
	}
	cfg, err := server.ConfigFromEnv(e.getenv)
	if err != nil {
		return commandFailed(e, "serve", err)
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, nil))
	cfg.Announce = e.stdout // the first admin's sign-in link and token
	ctx, stop := signal.NotifyContext(e.ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := server.New(ctx, cfg, logger)
	if err != nil {
		return commandFailed(e, "serve", err)
	}
	if err := srv.Run(ctx); err != nil {
		return commandFailed(e, "serve", err)
	}
	return exitOK
}
