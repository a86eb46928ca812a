package proxy

import (
	"strings"
	"testing"
)

// FuzzCheckPath feeds raw request targets to the proxy's parsing: it never
// panics, and a path it accepts has no way left to climb out of the base
// URL's path (no dot segment, with or without ";parameters", no empty
// segment, no backslash, no control character), whatever decoding the
// upstream applies once more.
func FuzzCheckPath(f *testing.F) {
	for _, seed := range []string{
		"/c/github/repos/a/b", "/c/github/../x", "/c/github/%2e%2e/x", "/c/github/..;/x", "/c/github/%2e%2e%3b/x",
		"/c/github/%252e%252e/x", "/c/github/a%2fb", "/c/github/a%5cb", "/c/github//x", "/c/github/a?x=1#f", "http://evil/c/github/x",
		"/c/github/%00", "/c/GitHub/x", "/c/github/.;x/y",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, rawPath, _, err := splitTarget(raw)
		if err != nil {
			return
		}
		path, err := checkPath(rawPath)
		if err != nil {
			return
		}
		segments := strings.Split(strings.TrimPrefix(path, "/"), "/")
		for i, seg := range segments {
			if seg == "" && i < len(segments)-1 {
				t.Fatalf("checkPath(%q) = %q: empty segment", rawPath, path)
			}
			if isDots(seg) {
				t.Fatalf("checkPath(%q) = %q: dot segment %q", rawPath, path, seg)
			}
		}
		if strings.ContainsAny(path, "\\\x00\r\n") {
			t.Fatalf("checkPath(%q) = %q: backslash or control character", rawPath, path)
		}
	})
}
