package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// defaultServer is the server the modules commands talk to without --server
// or WORKBENCH_SERVER: `make run`'s address.
const defaultServer = "http://127.0.0.1:8420"

// moduleTimeout bounds one modules command; a load compiles the module
// before the server answers.
const moduleTimeout = 5 * time.Minute

// maxAnswerBytes bounds what the CLI reads of an answer.
const maxAnswerBytes = 16 << 20

// adminClient calls a running server's admin API with an admin's API token.
type adminClient struct {
	base  string
	token string
	http  *http.Client
}

// errorAnswer is the server's JSON error body.
type errorAnswer struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// do sends a request and returns the answer's body, or an error naming the
// server's error code and message.
func (a *adminClient) do(ctx context.Context, method, path string, body io.Reader) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/wasm")
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e errorAnswer
		if json.Unmarshal(b, &e) != nil || e.Error.Code == "" {
			return nil, fmt.Errorf("%s %s: %s", method, path, resp.Status)
		}
		return nil, fmt.Errorf("%s: %s", e.Error.Code, e.Error.Message)
	}
	return b, nil
}

// moduleCommand defines a modules subcommand: --server and --json, and run
// with the client and the positional arguments; want is how many there
// must be and what they are called.
func moduleCommand(name, synopsis, summary string, want []string,
	run func(ctx context.Context, e *env, a *adminClient, args []string, asJSON bool) error) *command {
	return &command{
		name:     "modules " + name,
		synopsis: "[--server URL] [--json] " + synopsis,
		summary: summary + "\n\nIt talks to a running server's admin API as the admin whose API token is in\n" +
			"WORKBENCH_TOKEN; --server (or WORKBENCH_SERVER) names the server, " + defaultServer + "\nby default.",
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			server := fs.String("server", "", "the server's base URL (default $WORKBENCH_SERVER or "+defaultServer+")")
			asJSON := fs.Bool("json", false, "print the server's JSON answer")
			return func(e *env, args []string) int {
				if len(args) != len(want) {
					return usageError(e, fs, "want %s", describeArgs(want))
				}
				base := cmp.Or(*server, e.getenv("WORKBENCH_SERVER"), defaultServer)
				if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					return usageError(e, fs, "--server %q is not an http(s) URL", base)
				}
				token := e.getenv("WORKBENCH_TOKEN")
				if token == "" {
					return commandFailed(e, "modules "+name, errors.New("set WORKBENCH_TOKEN to an admin's API token"))
				}
				ctx, cancel := context.WithTimeout(e.ctx, moduleTimeout)
				defer cancel()
				a := &adminClient{base: strings.TrimRight(base, "/"), token: token, http: &http.Client{}}
				if err := run(ctx, e, a, args, *asJSON); err != nil {
					return commandFailed(e, "modules "+name, err)
				}
				return exitOK
			}
		},
	}
}

func describeArgs(names []string) string {
	if len(names) == 0 {
		return "no arguments"
	}
	return strings.Join(names, " ")
}

// moduleRow is what `modules ls` prints of a module.
type moduleRow struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
	ABI     string `json:"abi"`
	Source  string `json:"source"`
	Calls   uint64 `json:"calls"`
	Errors  uint64 `json:"errors"`
	Latency struct {
		P50 float64 `json:"p50Ms"`
		P95 float64 `json:"p95Ms"`
		P99 float64 `json:"p99Ms"`
	} `json:"latency"`
	Instances struct {
		Idle        int    `json:"idle"`
		Busy        int    `json:"busy"`
		MemoryBytes uint64 `json:"memoryBytes"`
	} `json:"instances"`
	LoadError *struct {
		Error string `json:"error"`
	} `json:"loadError"`
}

// printJSON indents the server's answer onto stdout.
func printJSON(e *env, answer []byte) error {
	var b bytes.Buffer
	if err := json.Indent(&b, answer, "", "  "); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, err := e.stdout.Write(b.Bytes())
	return err
}

func modulesLsCommand() *command {
	return moduleCommand("ls", "", "List the loaded modules with their counters, then those that failed to load.", nil,
		func(ctx context.Context, e *env, a *adminClient, _ []string, asJSON bool) error {
			answer, err := a.do(ctx, http.MethodGet, "/api/admin/modules", nil)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e, answer)
			}
			var list struct {
				Modules []moduleRow `json:"modules"`
				Broken  []struct {
					Name  string `json:"name"`
					Path  string `json:"path"`
					Error string `json:"error"`
				} `json:"broken"`
			}
			if err := json.Unmarshal(answer, &list); err != nil {
				return fmt.Errorf("the server's answer: %w", err)
			}
			w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tVERSION\tSOURCE\tABI\tCALLS\tERRORS\tP50\tP95\tP99\tIDLE\tBUSY\tMEMORY\tSHA256")
			for _, m := range list.Modules {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%d\t%.2fms\t%.2fms\t%.2fms\t%d\t%d\t%dKiB\t%.12s\n", m.Name, m.Version, m.Source, m.ABI,
					m.Calls, m.Errors, m.Latency.P50, m.Latency.P95, m.Latency.P99, m.Instances.Idle, m.Instances.Busy, m.Instances.MemoryBytes>>10, m.SHA256)
				if m.LoadError != nil {
					fmt.Fprintf(w, "  last reload failed: %s\n", m.LoadError.Error)
				}
			}
			if err := w.Flush(); err != nil {
				return err
			}
			for _, b := range list.Broken {
				fmt.Fprintf(e.stdout, "broken: %s %s: %s\n", cmp.Or(b.Name, "?"), b.Path, b.Error)
			}
			return nil
		})
}

func modulesInspectCommand() *command {
	return moduleCommand("inspect", "NAME", "Show one module in full: manifest, limits, imports and exports, counters per tool\nand its last errors (JSON).", []string{"NAME"},
		func(ctx context.Context, e *env, a *adminClient, args []string, _ bool) error {
			answer, err := a.do(ctx, http.MethodGet, "/api/admin/modules/"+url.PathEscape(args[0]), nil)
			if err != nil {
				return err
			}
			return printJSON(e, answer)
		})
}

// outcome prints what a change did.
func outcome(e *env, answer []byte, asJSON bool) error {
	if asJSON {
		return printJSON(e, answer)
	}
	var out struct {
		Module, Replaced *moduleRow
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		return fmt.Errorf("the server's answer: %w", err)
	}
	switch {
	case out.Module != nil && out.Replaced != nil:
		fmt.Fprintf(e.stdout, "%s %s (sha256 %.12s) replaced %s (sha256 %.12s)\n", out.Module.Name, out.Module.Version, out.Module.SHA256,
			out.Replaced.Version, out.Replaced.SHA256)
	case out.Module != nil:
		fmt.Fprintf(e.stdout, "loaded %s %s (sha256 %.12s)\n", out.Module.Name, out.Module.Version, out.Module.SHA256)
	case out.Replaced != nil:
		fmt.Fprintf(e.stdout, "unloaded %s %s\n", out.Replaced.Name, out.Replaced.Version)
	}
	return nil
}

func modulesReloadCommand() *command {
	return moduleAction("reload", "Read a module's file again and swap the new version in; calls in flight finish\non the old one. If the new version fails, the old one keeps serving.")
}

func modulesUnloadCommand() *command {
	return moduleAction("unload", "Unload a module; calls in flight finish first.")
}

// moduleAction is a command that posts an action on one module by name.
func moduleAction(action, summary string) *command {
	return moduleCommand(action, "NAME", summary, []string{"NAME"},
		func(ctx context.Context, e *env, a *adminClient, args []string, asJSON bool) error {
			answer, err := a.do(ctx, http.MethodPost, "/api/admin/modules/"+url.PathEscape(args[0])+"/"+action, nil)
			if err != nil {
				return err
			}
			return outcome(e, answer, asJSON)
		})
}

func modulesLoadCommand() *command {
	return moduleCommand("load", "FILE.wasm", "Upload a module; it replaces the loaded module of the same name, if any.", []string{"FILE.wasm"},
		func(ctx context.Context, e *env, a *adminClient, args []string, asJSON bool) error {
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			answer, err := a.do(ctx, http.MethodPost, "/api/admin/modules", f)
			if err != nil {
				return err
			}
			return outcome(e, answer, asJSON)
		})
}
