package githubtest

import (
	"context"
	"testing"

	"github.com/workbench-dev/workbench/toolcall"
)

// BenchmarkPlugin measures calls of the built GitHub plugin on a warm
// instance: one that fails input validation inside the plugin (the PDK's
// decode and schema check, no HTTP), and one that does a full GET through
// the host's egress to the fake on loopback.
func BenchmarkPlugin(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	cases := []struct {
		name    string
		call    toolcall.Call
		wantErr bool
	}{
		{"invalid-input", toolcall.Call{Tool: "github_get_repo", UserID: userID, Input: []byte(`{"owner":"bad owner","repo":"r"}`)}, true},
		{"get-repo", toolcall.Call{Tool: "github_get_repo", UserID: userID, Input: []byte(`{"owner":"octocat","repo":"hello-world"}`)}, false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := f.plugin.Call(ctx, c.call); (err != nil) != c.wantErr {
					b.Fatal(err)
				}
			}
			f.fake.ClearRequests()
			b.ReportMetric(float64(f.plugin.Stats().MemoryPages)*64/1024, "MiB-instance-memory")
		})
	}
}
