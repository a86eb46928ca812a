package server

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func envFrom(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigFromEnv(t *testing.T) {
	key := strings.Repeat("0f", 32)
	tests := []struct {
		name string
		env  map[string]string
		want Config
	}{
		{
			name: "defaults",
			env:  nil,
			want: Config{
				ListenAddr:        "127.0.0.1:8420",
				PublicURL:         "http://127.0.0.1:8420",
				DataDir:           "./data",
				BuiltinPluginsDir: "plugins-wasm",
				ToolSurface:       SurfaceMeta,
				BrowserSessionTTL: 300 * time.Second,
				ConnectWindow:     10 * time.Minute,
			},
		},
		{
			name: "public URL follows the listen address",
			env:  map[string]string{"LISTEN_ADDR": "0.0.0.0:9000"},
			want: Config{
				ListenAddr:        "0.0.0.0:9000",
				PublicURL:         "http://0.0.0.0:9000",
				DataDir:           "./data",
				BuiltinPluginsDir: "plugins-wasm",
				ToolSurface:       SurfaceMeta,
				BrowserSessionTTL: 300 * time.Second,
				ConnectWindow:     10 * time.Minute,
			},
		},
		{
			name: "everything set",
			env: map[string]string{
				"LISTEN_ADDR":                 "127.0.0.1:0",
				"SERVER_PUBLIC_URL":           "https://wb.example.com/base/",
				"DATA_DIR":                    "/var/lib/wb",
				"DATABASE_URL":                "postgres://wb@db/wb",
				"ENCRYPTION_KEY":              key,
				"ENCRYPTION_KEYS_OLD":         strings.Repeat("1a", 32) + ", " + strings.Repeat("2b", 32),
				"PLUGINS_DIR":                 "/opt/plugins",
				"BUILTIN_PLUGINS_DIR":         "/opt/builtin",
				"MCP_TOOL_SURFACE":            "both",
				"BROWSER_SESSION_TTL_SECONDS": "42",
				"CONNECT_WINDOW_SECONDS":      "90",
				"WORKBENCH_ROOT":              "/srv/work",
				"EGRESS_ALLOW_PRIVATE":        "1",
				"JOTS_MAX_BYTES":              "1048576",
				"JOTS_MAX_FILES":              "20",
				"JOTS_UPLOAD_TTL_SECONDS":     "60",
				"WORKBENCH_MAX_BYTES":         "4096",
				"WORKBENCH_MAX_FILES":         "50",
				"WORKBENCH_MAX_PLANS":         "3",
				"WORKBENCH_IDLE_SECONDS":      "3600",
			},
			want: Config{
				ListenAddr:         "127.0.0.1:0",
				PublicURL:          "https://wb.example.com/base",
				DataDir:            "/var/lib/wb",
				DatabaseURL:        "postgres://wb@db/wb",
				EncryptionKey:      bytes.Repeat([]byte{0x0f}, 32),
				EncryptionKeysOld:  [][]byte{bytes.Repeat([]byte{0x1a}, 32), bytes.Repeat([]byte{0x2b}, 32)},
				PluginsDir:         "/opt/plugins",
				BuiltinPluginsDir:  "/opt/builtin",
				ToolSurface:        SurfaceBoth,
				BrowserSessionTTL:  42 * time.Second,
				ConnectWindow:      90 * time.Second,
				WorkbenchRoot:      "/srv/work",
				EgressAllowPrivate: true,
				JotMaxBytes:        1 << 20,
				JotMaxFiles:        20,
				JotUploadTTL:       time.Minute,
				WorkbenchMaxBytes:  4096,
				WorkbenchMaxFiles:  50,
				WorkbenchMaxPlans:  3,
				WorkbenchIdle:      time.Hour,
			},
		},
		{
			name: "egress explicitly off",
			env:  map[string]string{"EGRESS_ALLOW_PRIVATE": "false", "MCP_TOOL_SURFACE": "direct"},
			want: Config{
				ListenAddr:        "127.0.0.1:8420",
				PublicURL:         "http://127.0.0.1:8420",
				DataDir:           "./data",
				BuiltinPluginsDir: "plugins-wasm",
				ToolSurface:       SurfaceDirect,
				BrowserSessionTTL: 300 * time.Second,
				ConnectWindow:     10 * time.Minute,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ConfigFromEnv(envFrom(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.EncryptionKey, tt.want.EncryptionKey) {
				t.Errorf("EncryptionKey = %x, want %x", got.EncryptionKey, tt.want.EncryptionKey)
			}
			got.EncryptionKey, tt.want.EncryptionKey = nil, nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ConfigFromEnv =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestConfigFromEnv_Errors(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		wantVar  string
		wantText string
	}{
		{"short key", map[string]string{"ENCRYPTION_KEY": "abcd"}, "ENCRYPTION_KEY", "want 64 hex characters, got 4"},
		{"non-hex key", map[string]string{"ENCRYPTION_KEY": strings.Repeat("zz", 32)}, "ENCRYPTION_KEY", "not hexadecimal"},
		{"old keys", map[string]string{"ENCRYPTION_KEYS_OLD": strings.Repeat("ab", 32) + ",beef"}, "ENCRYPTION_KEYS_OLD", "key 2: want 64 hex characters, got 4"},
		{"surface", map[string]string{"MCP_TOOL_SURFACE": "all"}, "MCP_TOOL_SURFACE", `"all" is not one of meta, direct, both`},
		{"ttl word", map[string]string{"BROWSER_SESSION_TTL_SECONDS": "5m"}, "BROWSER_SESSION_TTL_SECONDS", `"5m" is not a positive whole number`},
		{"ttl zero", map[string]string{"BROWSER_SESSION_TTL_SECONDS": "0"}, "BROWSER_SESSION_TTL_SECONDS", "positive"},
		{"ttl negative", map[string]string{"BROWSER_SESSION_TTL_SECONDS": "-3"}, "BROWSER_SESSION_TTL_SECONDS", "positive"},
		{"connect window", map[string]string{"CONNECT_WINDOW_SECONDS": "10m"}, "CONNECT_WINDOW_SECONDS", `"10m" is not a positive whole number`},
		{"egress", map[string]string{"EGRESS_ALLOW_PRIVATE": "yes please"}, "EGRESS_ALLOW_PRIVATE", "not a boolean"},
		{"browser max word", map[string]string{"BROWSER_MAX_SESSIONS": "many"}, "BROWSER_MAX_SESSIONS", "not a positive whole number"},
		{"browser max zero", map[string]string{"BROWSER_MAX_SESSIONS": "0"}, "BROWSER_MAX_SESSIONS", "positive"},
		{"browser no sandbox", map[string]string{"BROWSER_ALLOW_NO_SANDBOX": "maybe"}, "BROWSER_ALLOW_NO_SANDBOX", "not a boolean"},
		{"jot bytes", map[string]string{"JOTS_MAX_BYTES": "5MiB"}, "JOTS_MAX_BYTES", `"5MiB" is not a whole number from 1 to 1073741824`},
		{"jot files", map[string]string{"JOTS_MAX_FILES": "0"}, "JOTS_MAX_FILES", "from 1 to 100000"},
		{"jot upload ttl", map[string]string{"JOTS_UPLOAD_TTL_SECONDS": "86401"}, "JOTS_UPLOAD_TTL_SECONDS", "from 1 to 86400"},
		{"workbench bytes", map[string]string{"WORKBENCH_MAX_BYTES": "512MiB"}, "WORKBENCH_MAX_BYTES", `"512MiB" is not a whole number from 1 to 1099511627776`},
		{"workbench files", map[string]string{"WORKBENCH_MAX_FILES": "0"}, "WORKBENCH_MAX_FILES", "from 1 to 10000000"},
		{"workbench plans", map[string]string{"WORKBENCH_MAX_PLANS": "-1"}, "WORKBENCH_MAX_PLANS", "from 1 to 10000"},
		{"workbench idle", map[string]string{"WORKBENCH_IDLE_SECONDS": "59"}, "WORKBENCH_IDLE_SECONDS", "from 60 to 31536000"},
		{"jots per user", map[string]string{"JOTS_MAX_PER_USER": "0"}, "JOTS_MAX_PER_USER", "from 1 to 1000000"},
		{"jot bytes per user", map[string]string{"JOTS_MAX_BYTES_PER_USER": "100MiB"}, "JOTS_MAX_BYTES_PER_USER", "not a whole number"},
		{"listen addr", map[string]string{"LISTEN_ADDR": "8420"}, "LISTEN_ADDR", "not host:port"},
		{"public url relative", map[string]string{"SERVER_PUBLIC_URL": "wb.example.com"}, "SERVER_PUBLIC_URL", "not an absolute http(s) URL"},
		{"public url scheme", map[string]string{"SERVER_PUBLIC_URL": "ftp://wb.example.com"}, "SERVER_PUBLIC_URL", "not an absolute http(s) URL"},
		{"public url query", map[string]string{"SERVER_PUBLIC_URL": "https://wb.example.com/?a=b"}, "SERVER_PUBLIC_URL", "query"},
		{"jots url relative", map[string]string{"JOTS_PUBLIC_URL": "jots.example.net"}, "JOTS_PUBLIC_URL", "not an absolute http(s) URL"},
		{"jots url path", map[string]string{"JOTS_PUBLIC_URL": "https://jots.example.net/j"}, "JOTS_PUBLIC_URL", "origin only"},
		{"jots url same host", map[string]string{"SERVER_PUBLIC_URL": "https://wb.example.com", "JOTS_PUBLIC_URL": "https://WB.example.com:8443"},
			"JOTS_PUBLIC_URL", "another host name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ConfigFromEnv(envFrom(tt.env))
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrConfig) {
				t.Errorf("error %v does not wrap ErrConfig", err)
			}
			if !strings.Contains(err.Error(), tt.wantVar+":") || !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q, want it to name %s and say %q", err, tt.wantVar, tt.wantText)
			}
		})
	}
}

func TestConfig_Validate(t *testing.T) {
	base := Config{}.withDefaults()
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantVar string
	}{
		{"defaults are valid", func(*Config) {}, ""},
		{"key of the wrong size", func(c *Config) { c.EncryptionKey = make([]byte, 16) }, "ENCRYPTION_KEY"},
		{"unknown surface", func(c *Config) { c.ToolSurface = "everything" }, "MCP_TOOL_SURFACE"},
		{"ttl below a second", func(c *Config) { c.BrowserSessionTTL = time.Millisecond }, "BROWSER_SESSION_TTL_SECONDS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base
			tt.mutate(&cfg)
			err := cfg.Validate()
			if tt.wantVar == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantVar) {
				t.Errorf("Validate = %v, want an error naming %s", err, tt.wantVar)
			}
		})
	}
}
