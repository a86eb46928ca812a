package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

const (
	// buildTimeout bounds one `plugin build`.
	buildTimeout = 10 * time.Minute
	// maxBuildFileBytes caps the build files `plugin build` reads.
	maxBuildFileBytes = 1 << 20
	// defaultRustc is Debian's rustc, which has the wasm32-wasi standard
	// library (a rustup toolchain usually lacks it); $RUSTC overrides it.
	defaultRustc = "/usr/bin/rustc"
	// wasiReactorCRT is the wasi-libc start file C plugins link against.
	wasiReactorCRT = "/usr/lib/wasm32-wasi/crt1-reactor.o"
)

var (
	// errUnknownLanguage is returned by `plugin build` for a folder it cannot build.
	errUnknownLanguage = errors.New("unknown plugin language")
	// errToolchainMissing is returned by `plugin build` when a compiler the
	// folder's language needs is not installed.
	errToolchainMissing = errors.New("toolchain missing")
)

// cMakefileRe finds the include of the C kit's rules in a Makefile.
var cMakefileRe = regexp.MustCompile(`(?m)^\s*-?include\s+\S*plugin\.mk\s*$`)

// rustKitRe finds the path of the workbench dependency in a Cargo.toml.
var rustKitRe = regexp.MustCompile(`(?m)^\s*workbench\s*=\s*\{[^}\n]*\bpath\s*=\s*"([^"\n]+)"`)

// detectLanguage tells a plugin folder's language by its build file, in the
// order tools/build-plugins.sh checks them; "" when it has none.
func detectLanguage(dir string) (string, error) {
	switch {
	case fileExists(filepath.Join(dir, "go.mod")):
		return "go", nil
	case fileExists(filepath.Join(dir, "Cargo.toml")):
		return "rust", nil
	case fileExists(filepath.Join(dir, "package.json")) && fileExists(filepath.Join(dir, "asconfig.json")):
		return "assemblyscript", nil
	case fileExists(filepath.Join(dir, "Makefile")):
		mk, err := readBuildFile(filepath.Join(dir, "Makefile"))
		if err != nil {
			return "", err
		}
		if cMakefileRe.Match(mk) {
			return "c", nil
		}
	}
	return "", nil
}

// readBuildFile reads a build file of at most maxBuildFileBytes.
func readBuildFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBuildFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxBuildFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxBuildFileBytes)
	}
	return b, nil
}

// buildPlugin builds the plugin folder dir and returns the .wasm path. The
// compilers' output goes to stderr.
func buildPlugin(e *env, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if info, err := os.Stat(abs); err != nil {
		return "", err
	} else if !info.IsDir() {
		return "", fmt.Errorf("%s is not a folder", dir)
	}
	lang, err := detectLanguage(abs)
	if err != nil {
		return "", err
	}
	name := filepath.Base(abs)
	out := filepath.Join(abs, name+".wasm")
	ctx, cancel := context.WithTimeout(e.ctx, buildTimeout)
	defer cancel()
	b := &builder{ctx: ctx, e: e, dir: abs}
	switch lang {
	case "go":
		err = b.goPlugin(out)
	case "rust":
		err = b.rustPlugin(name, out)
	case "assemblyscript":
		err = b.assemblyScriptPlugin(out)
	case "c":
		err = b.cPlugin(name)
	default:
		return "", fmt.Errorf("%s: %w: no go.mod, Cargo.toml, package.json with asconfig.json, or Makefile including plugin.mk", dir, errUnknownLanguage)
	}
	if err != nil {
		return "", err
	}
	return out, nil
}

// builder runs one plugin folder's build commands.
type builder struct {
	ctx context.Context
	e   *env
	dir string
}

// run runs a command in the plugin folder with extra environment variables.
func (b *builder) run(extraEnv []string, name string, args ...string) error {
	cmd := exec.CommandContext(b.ctx, name, args...)
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.Stdout, cmd.Stderr = b.e.stderr, b.e.stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s in %s: %w", filepath.Base(name), strings.Join(args, " "), b.dir, err)
	}
	return nil
}

// need looks a command up on PATH and explains what to install otherwise.
func need(command, lang, install string) error {
	if _, err := exec.LookPath(command); err != nil {
		return fmt.Errorf("%w: %s plugins need %s, which is not on PATH: %s", errToolchainMissing, lang, command, install)
	}
	return nil
}

// goPlugin builds a Go plugin as a WASI preview 1 reactor.
func (b *builder) goPlugin(out string) error {
	if err := need("go", "Go", "install Go from https://go.dev/dl"); err != nil {
		return err
	}
	return b.run([]string{"GOOS=wasip1", "GOARCH=wasm"}, "go", "build", "-buildmode=c-shared", "-trimpath", "-o", out, ".")
}

// rustPlugin builds a Rust plugin with rustc and no cargo: the kit named by
// Cargo.toml's workbench path dependency as an rlib, then src/lib.rs as a
// cdylib linked to it, with a 256 KiB stack.
func (b *builder) rustPlugin(name, out string) error {
	rustc := b.e.getenv("RUSTC")
	if rustc == "" {
		rustc = defaultRustc
	}
	if info, err := os.Stat(rustc); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		return fmt.Errorf("%w: Rust plugins need %s: install Debian's rustc and libstd-rust-dev-wasm32 (tools/test-deps.sh), or set RUSTC", errToolchainMissing, rustc)
	}
	cargo, err := readBuildFile(filepath.Join(b.dir, "Cargo.toml"))
	if err != nil {
		return err
	}
	m := rustKitRe.FindSubmatch(cargo)
	if m == nil {
		return fmt.Errorf("%s: no `workbench = { path = \"...\" }` dependency naming the Rust kit", filepath.Join(b.dir, "Cargo.toml"))
	}
	kit := filepath.FromSlash(string(m[1]))
	if !filepath.IsAbs(kit) {
		kit = filepath.Join(b.dir, kit)
	}
	kitLib := filepath.Join(kit, "src", "lib.rs")
	if !fileExists(kitLib) {
		return fmt.Errorf("the Rust kit named in Cargo.toml has no %s", kitLib)
	}
	tmp, err := os.MkdirTemp("", "workbench-rust-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	flags := []string{"--edition", "2021", "--target", "wasm32-wasi", "-C", "opt-level=s", "-C", "panic=abort"}
	rlib := filepath.Join(tmp, "libworkbench.rlib")
	if err := b.run(nil, rustc, append(flags, "--crate-type=rlib", "--crate-name", "workbench", kitLib, "-o", rlib)...); err != nil {
		return err
	}
	return b.run(nil, rustc, append(flags, "--crate-type=cdylib", "--crate-name", strings.ReplaceAll(name, "-", "_"),
		"-C", "lto", "-C", "codegen-units=1", "-C", "strip=symbols", "-C", "link-arg=-zstack-size=262144",
		"--extern", "workbench="+rlib, filepath.Join("src", "lib.rs"), "-o", out)...)
}

// assemblyScriptPlugin builds an AssemblyScript plugin with the asc of its
// node_modules, installing them first when the compiler or the kit is
// missing or package-lock.json is newer than the installation.
func (b *builder) assemblyScriptPlugin(out string) error {
	if err := need("node", "AssemblyScript", "install Node.js 20 (tools/test-deps.sh checks for it)"); err != nil {
		return err
	}
	asc := filepath.Join("node_modules", "assemblyscript", "bin", "asc.js")
	if b.npmInstallDue(asc) {
		if err := need("npm", "AssemblyScript", "install Node.js 20 with npm (tools/test-deps.sh checks for it)"); err != nil {
			return err
		}
		install := "install"
		if fileExists(filepath.Join(b.dir, "package-lock.json")) {
			install = "ci"
		}
		if err := b.run(nil, "npm", install, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"); err != nil {
			return err
		}
	}
	return b.run(nil, "node", asc, filepath.Join("assembly", "index.ts"), "--config", "asconfig.json", "-o", out)
}

func (b *builder) npmInstallDue(asc string) bool {
	kitLink := filepath.Join(b.dir, "node_modules", "@workbench", "pdk-assemblyscript", "package.json")
	if !fileExists(filepath.Join(b.dir, asc)) || !fileExists(kitLink) {
		return true
	}
	lock, err := os.Stat(filepath.Join(b.dir, "package-lock.json"))
	if err != nil {
		return false
	}
	installed, err := os.Stat(filepath.Join(b.dir, "node_modules", ".package-lock.json"))
	return err != nil || lock.ModTime().After(installed.ModTime())
}

// cPlugin builds a C plugin with make and the kit's plugin.mk (clang, lld and
// wasi-libc for wasm32-wasi as a reactor).
func (b *builder) cPlugin(name string) error {
	for _, command := range []string{"make", "clang"} {
		if err := need(command, "C", "run tools/test-deps.sh (Debian's make, clang, lld, wasi-libc, libclang-rt-dev-wasm32)"); err != nil {
			return err
		}
	}
	if !fileExists(wasiReactorCRT) {
		return fmt.Errorf("%w: C plugins need wasi-libc (%s is missing): run tools/test-deps.sh", errToolchainMissing, wasiReactorCRT)
	}
	return b.run(nil, "make", "--no-print-directory", "-s", "-C", b.dir, "NAME="+name)
}
