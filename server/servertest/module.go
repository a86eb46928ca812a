package servertest

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/internal/wattest"
)

//go:embed module.wat
var moduleWAT string

// EchoModule compiles an ABI v1 plugin named name at version whose tools
// (slugs) return their input, and fail with code FLAKY when the input is
// {"fail":true}. It fails the test if wat2wasm is missing.
func EchoModule(t testing.TB, name, version string, slugs ...string) []byte {
	t.Helper()
	manifest := EchoManifest(name, version, slugs...)
	var exports strings.Builder
	for _, s := range slugs {
		fmt.Fprintf(&exports, "(export %q (func $echo))\n", s)
	}
	src := strings.NewReplacer("{{MANIFEST}}", wattest.Escape(string(manifest)), "{{LEN}}", fmt.Sprint(len(manifest)),
		"{{EXPORTS}}", exports.String()).Replace(moduleWAT)
	return wattest.Compile(t, []byte(src))
}

// EchoManifest is the manifest of an echo plugin named name at version:
// auth none, one tool per slug taking any object.
func EchoManifest(name, version string, slugs ...string) []byte {
	type tool struct {
		Slug        string          `json:"slug"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	m := struct {
		ABI         int               `json:"abi"`
		Name        string            `json:"name"`
		Version     string            `json:"version"`
		Description string            `json:"description"`
		Auth        map[string]string `json:"auth"`
		Tools       []tool            `json:"tools"`
	}{ABI: 1, Name: name, Version: version, Description: "Echo module " + name + ".", Auth: map[string]string{"mode": "none"}}
	for _, s := range slugs {
		m.Tools = append(m.Tools, tool{Slug: s, Description: "Echoes its input.", InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // a struct of strings always encodes
	}
	return b
}
