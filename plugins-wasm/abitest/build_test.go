package abitest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// repoRoot is the repository root, relative to this package.
const repoRoot = "../.."

// buildTimeout bounds the build of one conformance plugin.
const buildTimeout = 3 * time.Minute

// language is one plugin kit and its conformance plugin.
type language struct {
	// name is the word the plugin puts in its tool slugs, its integration
	// name (conf-<name>) and its log line ("hello from <name>").
	name string
	// build writes the plugin's module to out with the commands
	// tools/build-plugins.sh uses for the language.
	build func(ctx context.Context, out string) error
}

// integration is the plugin's integration name.
func (l language) integration() string { return "conf-" + l.name }

// tool is the slug of the plugin's tool named short ("echo", "fail", ...).
func (l language) tool(short string) string { return "conf_" + l.name + "_" + short }

// languages are the four kits. The conformance folders are not all plugin
// folders tools/build-plugins.sh recognises (the C Makefile includes
// ../plugin.mk, the AssemblyScript plugin uses the kit's package.json and
// asconfig.json), so each is built here with that script's commands, into a
// temporary folder rather than the source tree.
var languages = []language{
	{name: "go", build: buildGo},
	{name: "c", build: buildC},
	{name: "rust", build: buildRust},
	{name: "assemblyscript", build: buildAssemblyScript},
}

// run runs name with args in dir and returns its combined output in the
// error when it fails.
func run(ctx context.Context, dir string, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return nil
}

func buildGo(ctx context.Context, out string) error {
	return run(ctx, filepath.Join(repoRoot, "pdk", "go", "conformance"), []string{"GOOS=wasip1", "GOARCH=wasm"},
		"go", "build", "-buildmode=c-shared", "-trimpath", "-o", out, ".")
}

func buildC(ctx context.Context, out string) error {
	if _, err := exec.LookPath("clang"); err != nil {
		return fmt.Errorf("clang is missing: run tools/test-deps.sh: %w", err)
	}
	return run(ctx, filepath.Join(repoRoot, "pdk", "c", "conformance"), nil,
		"make", "--no-print-directory", "-s", "OUT="+out)
}

// rustc is Debian's compiler, which has the wasm32-wasi target; RUSTC
// overrides it, as in tools/build-plugins.sh.
func rustc() string {
	if r := os.Getenv("RUSTC"); r != "" {
		return r
	}
	return "/usr/bin/rustc"
}

func buildRust(ctx context.Context, out string) error {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		return err
	}
	rlib := filepath.Join(filepath.Dir(out), "libworkbench.rlib")
	flags := []string{"--edition", "2021", "--target", "wasm32-wasi", "-C", "opt-level=s", "-C", "panic=abort"}
	if err := run(ctx, root, nil, rustc(), append(flags, "--crate-type=rlib", "--crate-name", "workbench",
		"pdk/rust/src/lib.rs", "-o", rlib)...); err != nil {
		return err
	}
	return run(ctx, root, nil, rustc(), append(flags, "--crate-type=cdylib", "--crate-name", "conf_rust",
		"-C", "lto", "-C", "codegen-units=1", "-C", "strip=symbols", "-C", "link-arg=-zstack-size=262144",
		"--extern", "workbench="+rlib, "pdk/rust/conformance/src/lib.rs", "-o", out)...)
}

func buildAssemblyScript(ctx context.Context, out string) error {
	dir := filepath.Join(repoRoot, "pdk", "assemblyscript")
	asc := filepath.Join("node_modules", "assemblyscript", "bin", "asc.js")
	if _, err := os.Stat(filepath.Join(dir, asc)); err != nil {
		return fmt.Errorf("%s is missing: run tools/test-deps.sh: %w", asc, err)
	}
	return run(ctx, dir, nil, "node", asc, "conformance/assembly/index.ts", "--config", "asconfig.json", "-o", out)
}

var (
	buildOnce  sync.Once
	builtWasm  map[string][]byte
	buildError error
)

// buildAll builds the four conformance plugins once per test binary, in
// parallel, and returns each module by language name.
func buildAll(t testing.TB) map[string][]byte {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "abitest-build-")
		if err != nil {
			buildError = err
			return
		}
		defer os.RemoveAll(dir)
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		errs := make([]error, len(languages))
		var wg sync.WaitGroup
		for i, l := range languages {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sub := filepath.Join(dir, l.name)
				if err := os.Mkdir(sub, 0o755); err != nil {
					errs[i] = err
					return
				}
				out := filepath.Join(sub, l.integration()+".wasm")
				if err := l.build(ctx, out); err != nil {
					errs[i] = fmt.Errorf("building %s: %w", l.integration(), err)
				}
			}()
		}
		wg.Wait()
		builtWasm = map[string][]byte{}
		for i, l := range languages {
			if errs[i] != nil {
				buildError = errs[i]
				return
			}
			b, err := os.ReadFile(filepath.Join(dir, l.name, l.integration()+".wasm"))
			if err != nil {
				buildError = err
				return
			}
			builtWasm[l.name] = b
		}
	})
	if buildError != nil {
		t.Fatal(buildError)
	}
	return builtWasm
}
