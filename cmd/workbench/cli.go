package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed
	exitUsage   = 2 // the command line is wrong
)

const usageText = `Usage: workbench <command> [arguments]

Commands:
  serve                                  run the server, configured by environment variables
  migrate                                apply the database migrations and print the schema version
  user add --email E [--admin]           create a user; prints its API token as the last line
  user login-link --email E              print a one-time portal sign-in link (15 minutes)
  token create --email E [--name N]      mint an API token for a user; prints it as the last line
  token revoke --email E TOKEN_ID        revoke one of a user's API tokens
  app add --email E --name N --url U [--auth none|manual] [--bearer TOKEN]
                                         add a user's custom app (their own MCP server)
  app ls --email E                       list a user's custom apps
  app rm --email E --name N              remove a user's custom app and its credential
  keys rotate                            re-seal stored credentials under a new encryption key
  audit proxy [--email E] [--integration I] [--limit N] [--json]
                                         list the calls curl sessions made through the proxy
  plugin new --lang LANG [--dir DIR] NAME
                                         create a plugin folder (go, assemblyscript, c, rust)
  plugin build DIR                       build a plugin folder to DIR/<folder name>.wasm
  plugin inspect [--json] FILE.wasm      show a plugin's manifest, imports, exports and ABI v1 problems
  plugin call [flags] FILE.wasm TOOL [JSON]
                                         run one tool of a plugin locally and print its result
  modules ls                             list a running server's modules with their counters (admins;
                                         --server URL, token in WORKBENCH_TOKEN)
  modules inspect NAME                   show one module in full (JSON)
  modules reload NAME                    read a module's file again and swap the new version in
  modules unload NAME                    unload a module; calls in flight finish first
  modules load FILE.wasm                 upload a module (replaces the module of the same name)
  help [command]                         show this help, or the flags of a command

Run 'workbench help <command>' for a command's flags.
`

// env gives commands the process environment; tests pass a map.
type env struct {
	ctx    context.Context
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
}

// command is one subcommand.
type command struct {
	name     string // as typed, e.g. "plugin inspect"
	synopsis string // the arguments after the name
	summary  string
	// setup defines the command's flags on fs and returns the function that
	// runs the command with the positional arguments once flags are parsed.
	setup func(fs *flag.FlagSet) func(e *env, args []string) int
}

func commands() []*command {
	return []*command{serveCommand(), migrateCommand(), userAddCommand(), userLoginLinkCommand(), tokenCreateCommand(), tokenRevokeCommand(),
		appAddCommand(), appLsCommand(), appRmCommand(), keysRotateCommand(), auditProxyCommand(), pluginNewCommand(), pluginBuildCommand(), pluginInspectCommand(), pluginCallCommand(),
		modulesLsCommand(), modulesInspectCommand(), modulesReloadCommand(), modulesUnloadCommand(), modulesLoadCommand()}
}

// run executes the command line args and returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	e := &env{ctx: ctx, getenv: getenv, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		return help(e, args[1:])
	}
	cmd, rest := lookup(args)
	if cmd == nil {
		fmt.Fprintf(stderr, "workbench: unknown command %q\n\n%s", strings.Join(args[:min(len(args), 2)], " "), usageText)
		return exitUsage
	}
	fs := newFlagSet(e, cmd)
	runCommand := cmd.setup(fs)
	positional, code, ok := parseArgs(fs, rest)
	if !ok {
		return code
	}
	return runCommand(e, positional)
}

// lookup finds the command named by the first one or two words of args.
func lookup(args []string) (*command, []string) {
	for _, c := range commands() {
		words := strings.Fields(c.name)
		if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == c.name {
			return c, args[len(words):]
		}
	}
	return nil, nil
}

func help(e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stdout, usageText)
		return exitOK
	}
	var matched []*command
	for _, c := range commands() {
		if c.name == strings.Join(args, " ") || strings.HasPrefix(c.name, strings.Join(args, " ")+" ") {
			matched = append(matched, c)
		}
	}
	if len(matched) == 0 {
		fmt.Fprintf(e.stderr, "workbench help: unknown command %q\n\n%s", strings.Join(args, " "), usageText)
		return exitUsage
	}
	for i, c := range matched {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		fs := newFlagSet(e, c)
		c.setup(fs)
		fs.SetOutput(e.stdout)
		fs.Usage()
	}
	return exitOK
}

// newFlagSet returns a FlagSet whose usage shows the command line and summary.
func newFlagSet(e *env, c *command) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage: workbench %s %s\n\n%s\n", c.name, c.synopsis, c.summary)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(out, "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseArgs parses flags placed anywhere among the positional arguments
// ("inspect FILE --json" works like "inspect --json FILE"); "--" ends flags.
// It returns the positional arguments, or an exit code when parsing stopped:
// exitOK after -h, exitUsage after an error (already reported).
func parseArgs(fs *flag.FlagSet, args []string) ([]string, int, bool) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitOK, false
			}
			return nil, exitUsage, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, 0, true
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), 0, true
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// usageError reports a wrong command line and returns exitUsage.
func usageError(e *env, fs *flag.FlagSet, format string, a ...any) int {
	fmt.Fprintf(e.stderr, "workbench %s: %s\n\n", fs.Name(), fmt.Sprintf(format, a...))
	fs.SetOutput(e.stderr)
	fs.Usage()
	return exitUsage
}

// commandFailed reports a failed command and returns exitFailure.
func commandFailed(e *env, name string, err error) int {
	fmt.Fprintf(e.stderr, "workbench %s: %v\n", name, err)
	return exitFailure
}

// keyValues is a repeatable name=value flag.
type keyValues struct {
	what   string // for errors: "field", "setting"
	values map[string]string
}

func (kv *keyValues) String() string {
	if kv == nil || len(kv.values) == 0 {
		return ""
	}
	return fmt.Sprint(len(kv.values), " values")
}

func (kv *keyValues) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("%s %q is not name=value", kv.what, s)
	}
	if _, dup := kv.values[name]; dup {
		return fmt.Errorf("%s %q given twice", kv.what, name)
	}
	if kv.values == nil {
		kv.values = map[string]string{}
	}
	kv.values[name] = value
	return nil
}
