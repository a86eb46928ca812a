package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/runtime/extism"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/toolcall"
)

const (
	// maxPluginBytes caps the plugin files the CLI reads.
	maxPluginBytes = 128 << 20
	// tokenEnv supplies the OAuth token of `plugin call` when --token is not given.
	tokenEnv = "WORKBENCH_PLUGIN_TOKEN"
)

func pluginBuildCommand() *command {
	return &command{
		name:     "plugin build",
		synopsis: "DIR",
		summary: "Build the plugin in folder DIR to DIR/<folder name>.wasm. The language is told by\n" +
			"the build file, as tools/build-plugins.sh does: go.mod (Go), Cargo.toml (Rust),\n" +
			"package.json with asconfig.json (AssemblyScript), or a Makefile including the C\n" +
			"kit's plugin.mk (C). The commands are those of tools/build-plugins.sh.",
		setup: func(*flag.FlagSet) func(*env, []string) int {
			return pluginBuild
		},
	}
}

func pluginBuild(e *env, args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(e.stderr, "workbench plugin build: want exactly one argument, the plugin folder")
		return exitUsage
	}
	out, err := buildPlugin(e, args[0])
	if err != nil {
		return commandFailed(e, "plugin build", err)
	}
	info, err := os.Stat(out)
	if err != nil {
		return commandFailed(e, "plugin build", err)
	}
	fmt.Fprintf(e.stdout, "%s (%d bytes)\n", out, info.Size())
	return exitOK
}

func fileExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}

// readPlugin reads a .wasm file of at most maxPluginBytes.
func readPlugin(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPluginBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxPluginBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxPluginBytes)
	}
	return b, nil
}

func pluginInspectCommand() *command {
	return &command{
		name:     "plugin inspect",
		synopsis: "[--json] FILE.wasm",
		summary:  "Describe a plugin: manifest, tools, imports, exports, size and memory limits,\nand whether it satisfies ABI v1. Exits 1 when it does not.",
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			asJSON := fs.Bool("json", false, "print the report as JSON")
			return func(e *env, args []string) int {
				if len(args) != 1 {
					return usageError(e, fs, "want exactly one argument, the .wasm file")
				}
				return pluginInspect(e, args[0], *asJSON)
			}
		},
	}
}

// inspectJSON is the --json output of `plugin inspect`.
type inspectJSON struct {
	File  string `json:"file"`
	ABIOK bool   `json:"abiOk"`
	*runtime.Report
}

func pluginInspect(e *env, path string, asJSON bool) int {
	wasm, err := readPlugin(path)
	if err != nil {
		return commandFailed(e, "plugin inspect", err)
	}
	host, err := runtime.NewHost(e.ctx, runtime.Config{})
	if err != nil {
		return commandFailed(e, "plugin inspect", err)
	}
	defer host.Close(context.WithoutCancel(e.ctx))
	report := host.Inspect(e.ctx, wasm)
	ok := len(report.Problems) == 0
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(inspectJSON{File: path, ABIOK: ok, Report: report}); err != nil {
			return commandFailed(e, "plugin inspect", err)
		}
	} else {
		printReport(e.stdout, path, report)
	}
	if !ok {
		return exitFailure
	}
	return exitOK
}

// printReport writes the human-readable form of an inspection.
func printReport(w io.Writer, path string, r *runtime.Report) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "file\t%s\n", path)
	fmt.Fprintf(tw, "size\t%d bytes\n", r.Size)
	if r.Memory != nil {
		limit := "no maximum"
		if r.Memory.HasMax {
			limit = fmt.Sprintf("max %d pages", r.Memory.Max)
		}
		fmt.Fprintf(tw, "memory\tmin %d pages (64 KiB each), %s\n", r.Memory.Min, limit)
	}
	if m := r.Manifest; m != nil {
		fmt.Fprintf(tw, "integration\t%s %s (%s)\n", m.Name, m.Version, m.DisplayTitle())
		fmt.Fprintf(tw, "description\t%s\n", m.Description)
		fmt.Fprintf(tw, "auth\t%s\n", m.Auth.Mode)
		if m.BaseURL != "" {
			fmt.Fprintf(tw, "base URL\t%s (override with %s_BASE_URL)\n", m.BaseURL, manifest.EnvPrefix(m.Name))
		}
		if len(m.Hosts) > 0 {
			fmt.Fprintf(tw, "hosts\t%s\n", strings.Join(m.Hosts, ", "))
		}
		for _, s := range m.Settings {
			fmt.Fprintf(tw, "setting\t%s (%s_%s): %s\n", s.Name, manifest.EnvPrefix(m.Name), strings.ToUpper(s.Name), s.Description)
		}
	}
	if l := r.Limits; l != nil {
		fmt.Fprintf(tw, "limits\ttimeout %v, memory %d pages, output %d bytes, response %d bytes, concurrency %d\n",
			l.Timeout, l.MemoryPages, l.OutputBytes, l.ResponseBytes, l.Concurrency)
	}
	tw.Flush()

	if m := r.Manifest; m != nil {
		fmt.Fprintf(w, "\ntools (%d):\n", len(m.Tools))
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, t := range m.Tools {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", t.Slug, toolHints(t.Annotations), firstLine(t.Description))
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nimports (%d):\n", len(r.Imports))
	for _, f := range r.Imports {
		fmt.Fprintf(w, "  %s.%s %s\n", f.Module, f.Name, funcType(f))
	}
	fmt.Fprintf(w, "\nexports (%d):\n", len(r.Exports))
	for _, f := range r.Exports {
		fmt.Fprintf(w, "  %s %s\n", f.Name, funcType(f))
	}
	fmt.Fprintln(w)
	if len(r.Problems) == 0 {
		fmt.Fprintln(w, "ABI v1: ok")
		return
	}
	fmt.Fprintf(w, "ABI v1: %d problem(s)\n", len(r.Problems))
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  - %s\n", p)
	}
}

func funcType(f runtime.Func) string {
	return "(" + strings.Join(f.Params, ", ") + ") -> (" + strings.Join(f.Results, ", ") + ")"
}

func toolHints(a manifest.Annotations) string {
	var hints []string
	if a.ReadOnly {
		hints = append(hints, "read-only")
	}
	if a.Destructive {
		hints = append(hints, "destructive")
	}
	if len(hints) == 0 {
		return "-"
	}
	return strings.Join(hints, ",")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func pluginCallCommand() *command {
	return &command{
		name:     "plugin call",
		synopsis: "[flags] FILE.wasm TOOL [JSON]",
		summary: "Run one tool of a plugin locally and print its JSON result (JSON defaults to {}).\n" +
			"A tool error is printed as JSON on stderr and exits 1. The credential is kept in\n" +
			"memory: --token (or $" + tokenEnv + ") for oauth2 plugins, --field for apikey plugins.\n" +
			"Settings not given as flags are read from <NAME>_<SETTING> and <NAME>_BASE_URL.",
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			o := &callOptions{fields: keyValues{what: "field"}, settings: keyValues{what: "setting"}}
			fs.StringVar(&o.token, "token", "", "OAuth access token sent as a bearer token (default $"+tokenEnv+")")
			fs.Var(&o.fields, "field", "API-key connection field as name=value (repeatable)")
			fs.StringVar(&o.baseURL, "base-url", "", "API base URL overriding the manifest's baseUrl")
			fs.Var(&o.settings, "setting", "operator setting as name=value (repeatable)")
			fs.BoolVar(&o.allowPrivate, "allow-private", false, "let the plugin reach loopback and private addresses (local fakes only)")
			fs.StringVar(&o.user, "user", "cli", "user ID the call runs as")
			return func(e *env, args []string) int {
				if len(args) < 2 || len(args) > 3 {
					return usageError(e, fs, "want FILE.wasm TOOL [JSON]")
				}
				o.file, o.tool, o.input = args[0], args[1], "{}"
				if len(args) == 3 {
					o.input = args[2]
				}
				if !json.Valid([]byte(o.input)) {
					return usageError(e, fs, "the input %q is not valid JSON", o.input)
				}
				return pluginCall(e, o)
			}
		},
	}
}

type callOptions struct {
	file, tool, input string
	token             string
	fields, settings  keyValues
	baseURL           string
	allowPrivate      bool
	user              string
}

// callSettings answers config_get for the one plugin `plugin call` runs:
// flags first, then the environment.
type callSettings struct {
	values map[string]string
	env    runtime.SettingsSource
}

func (s callSettings) Setting(integration, name string) (string, bool) {
	if v, ok := s.values[name]; ok {
		return v, true
	}
	return s.env.Setting(integration, name)
}

func pluginCall(e *env, o *callOptions) int {
	wasm, err := readPlugin(o.file)
	if err != nil {
		return commandFailed(e, "plugin call", err)
	}
	settings := callSettings{values: map[string]string{}, env: runtime.EnvSettings{Getenv: e.getenv}}
	for k, v := range o.settings.values {
		settings.values[k] = v
	}
	if o.baseURL != "" {
		settings.values["base_url"] = o.baseURL
	}
	creds := credential.NewMemory()
	host, err := runtime.NewHost(e.ctx, runtime.Config{
		Credentials: creds,
		Egress:      egress.NewClient(egress.Options{AllowPrivate: o.allowPrivate}),
		Extism:      extism.ABI{},
		Settings:    settings,
		Logger:      slog.New(slog.NewTextHandler(e.stderr, nil)),
	})
	if err != nil {
		return commandFailed(e, "plugin call", err)
	}
	defer host.Close(context.WithoutCancel(e.ctx))
	p, err := host.Load(e.ctx, wasm)
	if err != nil {
		return commandFailed(e, "plugin call", fmt.Errorf("load %s: %w", o.file, err))
	}
	m := p.Manifest()
	cred, err := callCredential(m, o, e.getenv)
	if err != nil {
		return commandFailed(e, "plugin call", err)
	}
	if cred != nil {
		creds.Set(o.user, m.Name, cred)
	}

	out, err := p.Call(e.ctx, toolcall.Call{Tool: o.tool, UserID: o.user, Input: []byte(o.input)})
	if err != nil {
		var te *failure.Error
		if !errors.As(err, &te) {
			return commandFailed(e, "plugin call", err)
		}
		enc := json.NewEncoder(e.stderr)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(te); err != nil {
			return commandFailed(e, "plugin call", err)
		}
		return exitFailure
	}
	if err := writeJSON(e.stdout, out); err != nil {
		return commandFailed(e, "plugin call", err)
	}
	return exitOK
}

// callCredential builds the in-memory credential for the plugin's auth mode
// from the flags, or returns nil when none was given. Flags that do not fit
// the mode are errors, so a typo does not silently call unauthenticated.
func callCredential(m *manifest.Manifest, o *callOptions, getenv func(string) string) (*credential.Credential, error) {
	mode := m.Auth.Mode
	if o.token != "" && mode != manifest.ModeOAuth2 {
		return nil, fmt.Errorf("--token is for oauth2 plugins; %s uses %s", m.Name, mode)
	}
	if len(o.fields.values) > 0 && mode != manifest.ModeAPIKey {
		return nil, fmt.Errorf("--field is for apikey plugins; %s uses %s", m.Name, mode)
	}
	switch mode {
	case manifest.ModeOAuth2:
		token := o.token
		if token == "" {
			token = getenv(tokenEnv)
		}
		if token == "" {
			return nil, nil
		}
		return &credential.Credential{AccessToken: token}, nil
	case manifest.ModeAPIKey:
		if len(o.fields.values) == 0 {
			return nil, nil
		}
		var declared []string
		if m.Auth.APIKey != nil {
			for _, f := range m.Auth.APIKey.Fields {
				declared = append(declared, f.Name)
			}
		}
		for name := range o.fields.values {
			if !slices.Contains(declared, name) {
				return nil, fmt.Errorf("--field %s: %s declares no such field (fields: %s)", name, m.Name, strings.Join(declared, ", "))
			}
		}
		return &credential.Credential{Fields: o.fields.values}, nil
	}
	return nil, nil
}

// writeJSON prints a JSON value indented, with a final newline.
func writeJSON(w io.Writer, raw json.RawMessage) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err := buf.WriteTo(w)
	return err
}
