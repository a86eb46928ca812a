package wattest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wasmMagic starts every wasm binary: "\0asm" and version 1.
var wasmMagic = []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}

func TestEscape(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"printable ASCII", "a b~", "a b~"},
		{"quote and backslash", `"\`, `\22\5c`},
		{"control bytes", "a\n\t\x00\x7f", `a\0a\09\00\7f`},
		{"UTF-8", "é", `\c3\a9`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Escape(tt.in); got != tt.want {
				t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		wantErr string
	}{
		{"empty module", "(module)", ""},
		{"data with escapes", `(module (memory 1) (data (i32.const 0) "` + Escape(`{"k":"v\n"}`) + `"))`, ""},
		{"syntax error", "(module (func $f (unknown_op)))", "wat2wasm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wasm, err := Build([]byte(tt.src))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Build error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(wasm, wasmMagic) {
				t.Fatalf("Build = % x, want a wasm binary", wasm)
			}
		})
	}
}

func TestBuild_Cache(t *testing.T) {
	src := []byte(`(module (memory 1) (data (i32.const 0) "cache"))`)
	first, err := Build(src)
	if err != nil {
		t.Fatal(err)
	}
	first[len(first)-1] ^= 0xff // a caller's change must not reach the cache
	second, err := Build(src)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first, second) || !bytes.HasSuffix(second, []byte("cache")) {
		t.Fatalf("second Build = % x, want the unmodified module", second)
	}
}

func TestCompileFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.wat")
	src := `(module (memory 1) (data (i32.const 0) "{{TEXT}}") (global i32 (i32.const {{LEN}})))`
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got := CompileFile(t, path, map[string]string{"TEXT": Escape(`say "hi"`), "LEN": "8"})
	want := Compile(t, []byte(`(module (memory 1) (data (i32.const 0) "say \"hi\"") (global i32 (i32.const 8)))`))
	if !bytes.Equal(got, want) {
		t.Fatalf("CompileFile = % x, want % x", got, want)
	}
}

func TestCompileTo(t *testing.T) {
	out := filepath.Join(t.TempDir(), "a", "b", "m.wasm")
	if got := CompileTo(t, []byte("(module)"), out); got != out {
		t.Fatalf("CompileTo = %q, want %q", got, out)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, wasmMagic) {
		t.Fatalf("%s = % x, want an empty module", out, b)
	}
}

func TestBuild_NoWat2wasm(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Build([]byte("(module (memory 2))"))
	if !errors.Is(err, ErrNoWat2wasm) {
		t.Fatalf("Build error = %v, want ErrNoWat2wasm", err)
	}
}
