package extism

import (
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime"
)

// The plugins themselves run in package runtime's tests (extism_test.go
// there), which load them through this ABI.

func TestPluginError(t *testing.T) {
	tests := []struct {
		name, msg string
		code      failure.Code
		message   string
	}{
		{"error object", `{"code":"NOT_FOUND","message":"nothing here"}`, "NOT_FOUND", "nothing here"},
		{"bad code", `{"code":"not found","message":"nothing here"}`, failure.ToolError, "nothing here"},
		{"no message", `{"code":"NOT_FOUND"}`, failure.ToolError, `{"code":"NOT_FOUND"}`},
		{"plain text", "it broke", failure.ToolError, "it broke"},
		{"long text", strings.Repeat("x", runtime.MaxLogRecordBytes+10), failure.ToolError, strings.Repeat("x", runtime.MaxLogRecordBytes)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if e := pluginError(tt.msg); e.Code != tt.code || e.Message != tt.message {
				t.Fatalf("pluginError(%.40q) = %s: %.40q, want %s: %.40q", tt.msg, e.Code, e.Message, tt.code, tt.message)
			}
		})
	}
}
