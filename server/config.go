package server

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/workbench-dev/workbench/server/internal/clientaddr"
	"github.com/workbench-dev/workbench/server/internal/mcp"
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("invalid configuration")

// ToolSurface says which tools the MCP endpoint advertises.
type ToolSurface string

// The tool surfaces of MCP_TOOL_SURFACE.
const (
	SurfaceMeta   ToolSurface = "meta"   // the nine meta-tools only
	SurfaceDirect ToolSurface = "direct" // every plugin tool under its slug
	SurfaceBoth   ToolSurface = "both"   // the meta-tools and every plugin tool
)

// Defaults applied to unset configuration.
const (
	DefaultListenAddr        = "127.0.0.1:8420"
	DefaultDataDir           = "./data"
	DefaultBuiltinPluginsDir = "plugins-wasm"
	DefaultToolSurface       = SurfaceMeta
	DefaultBrowserSessionTTL = 300 * time.Second
	DefaultConnectWindow     = 10 * time.Minute
)

// encryptionKeyBytes is the AES-256 key size ENCRYPTION_KEY must decode to.
const encryptionKeyBytes = 32

// Config is everything the server needs to start. The zero value of a field
// means its default (see ConfigFromEnv); New applies the same defaults.
type Config struct {
	// ListenAddr is the host:port the HTTP server binds (LISTEN_ADDR).
	ListenAddr string
	// PublicURL is the URL clients reach the server at, without a trailing
	// slash (SERVER_PUBLIC_URL); defaults to http://ListenAddr.
	PublicURL string
	// DataDir holds the database, generated keys and the wasm compilation
	// cache (DATA_DIR). It is created with mode 0700.
	DataDir string
	// DatabaseURL selects the store (DATABASE_URL); empty means SQLite in DataDir.
	DatabaseURL string
	// EncryptionKey is the 32-byte key for secrets at rest (ENCRYPTION_KEY, 64
	// hex characters); nil means a key generated into DataDir.
	EncryptionKey []byte
	// EncryptionKeysOld are earlier keys (ENCRYPTION_KEYS_OLD, comma-separated
	// 64 hex characters each): secrets sealed with them still open, and
	// `workbench keys rotate` re-seals them under EncryptionKey.
	EncryptionKeysOld [][]byte
	// PluginsDir holds operator plugins, *.wasm (PLUGINS_DIR); empty means none.
	PluginsDir string
	// BuiltinPluginsDir holds the built-in plugins, <name>/<name>.wasm
	// (BUILTIN_PLUGINS_DIR).
	BuiltinPluginsDir string
	// ToolSurface is what /mcp advertises (MCP_TOOL_SURFACE).
	ToolSurface ToolSurface
	// BrowserSessionTTL is how long an idle browser session lives
	// (BROWSER_SESSION_TTL_SECONDS).
	BrowserSessionTTL time.Duration
	// BrowserMaxSessions caps the browser sessions alive at once across
	// users (BROWSER_MAX_SESSIONS); zero means 8.
	BrowserMaxSessions int
	// BrowserAllowNoSandbox runs Chromium without its own sandbox, which it
	// needs when the server runs as root (BROWSER_ALLOW_NO_SANDBOX).
	BrowserAllowNoSandbox bool
	// ConnectWindow is how long a user has to finish connecting an
	// integration after connect (CONNECT_WINDOW_SECONDS).
	ConnectWindow time.Duration
	// WorkbenchRoot is the root of the exec workspaces (WORKBENCH_ROOT);
	// empty means DataDir/workspaces.
	WorkbenchRoot string
	// WorkbenchMaxBytes caps the file bytes of one exec workspace
	// (WORKBENCH_MAX_BYTES); zero means 512 MiB.
	WorkbenchMaxBytes int64
	// WorkbenchMaxFiles caps the entries of one exec workspace
	// (WORKBENCH_MAX_FILES); zero means 10 000.
	WorkbenchMaxFiles int
	// WorkbenchMaxPlans caps one user's exec workspaces
	// (WORKBENCH_MAX_PLANS); zero means 20.
	WorkbenchMaxPlans int
	// WorkbenchIdle is how long an unused exec workspace lives
	// (WORKBENCH_IDLE_SECONDS); zero means 24 hours.
	WorkbenchIdle time.Duration
	// EgressAllowPrivate lets plugins reach loopback and private addresses
	// (EGRESS_ALLOW_PRIVATE); for development and tests only.
	EgressAllowPrivate bool
	// JotMaxBytes caps the decompressed file content of one jot
	// (JOTS_MAX_BYTES); zero means 5 MiB.
	JotMaxBytes int64
	// JotMaxFiles caps the files of one jot (JOTS_MAX_FILES); zero means 1000.
	JotMaxFiles int
	// JotMaxPerUser caps the jots of one user (JOTS_MAX_PER_USER); zero
	// means 100.
	JotMaxPerUser int
	// JotMaxBytesPerUser caps the file content of all of one user's jots
	// (JOTS_MAX_BYTES_PER_USER); zero means 100 MiB.
	JotMaxBytesPerUser int64
	// JotsPublicURL, when set, is the separate origin jots are served from
	// (JOTS_PUBLIC_URL, such as https://jots.example.net): its host must
	// differ from PublicURL's, /j/ on the app's host redirects there, and
	// that host answers nothing but /j/ (and the probes). Empty serves jots
	// under PublicURL.
	JotsPublicURL string
	// JotUploadTTL is how long a jot upload URL works
	// (JOTS_UPLOAD_TTL_SECONDS); zero means 5 minutes.
	JotUploadTTL time.Duration

	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client, for rate limits by address (TRUSTED_PROXIES: addresses
	// and CIDR prefixes, comma-separated); zero trusts none.
	TrustedProxies clientaddr.Resolver
	// PasswordHashConcurrency bounds the password hashes and checks (64 MiB
	// each) running at once (PASSWORD_HASH_CONCURRENCY); zero means the
	// number of CPUs.
	PasswordHashConcurrency int
	// MetricsToken, when set, must come as a bearer token with every
	// scrape of /metrics (METRICS_TOKEN); empty leaves /metrics open.
	MetricsToken string

	// Announce is where the first start prints the first admin's one-time
	// sign-in link and API token, shown once. It is not read from the
	// environment; nil means os.Stdout.
	Announce io.Writer

	// MCPAuthenticator resolves the bearer tokens of /mcp requests. It is not
	// read from the environment; nil means the API tokens in the store.
	MCPAuthenticator mcp.Authenticator
}

// ConfigFromEnv reads the configuration from environment variables through
// getenv (os.Getenv in production), applies defaults and validates it. Each
// error names the variable at fault.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		ListenAddr:        getenv("LISTEN_ADDR"),
		PublicURL:         getenv("SERVER_PUBLIC_URL"),
		DataDir:           getenv("DATA_DIR"),
		DatabaseURL:       getenv("DATABASE_URL"),
		PluginsDir:        getenv("PLUGINS_DIR"),
		BuiltinPluginsDir: getenv("BUILTIN_PLUGINS_DIR"),
		ToolSurface:       ToolSurface(getenv("MCP_TOOL_SURFACE")),
		WorkbenchRoot:     getenv("WORKBENCH_ROOT"),
		JotsPublicURL:     getenv("JOTS_PUBLIC_URL"),
		MetricsToken:      getenv("METRICS_TOKEN"),
	}
	if v := getenv("ENCRYPTION_KEY"); v != "" {
		key, err := parseEncryptionKey(v)
		if err != nil {
			return Config{}, fmt.Errorf("%w: ENCRYPTION_KEY: %v", ErrConfig, err)
		}
		cfg.EncryptionKey = key
	}
	if v := getenv("ENCRYPTION_KEYS_OLD"); v != "" {
		for i, part := range strings.Split(v, ",") {
			key, err := parseEncryptionKey(strings.TrimSpace(part))
			if err != nil {
				return Config{}, fmt.Errorf("%w: ENCRYPTION_KEYS_OLD: key %d: %v", ErrConfig, i+1, err)
			}
			cfg.EncryptionKeysOld = append(cfg.EncryptionKeysOld, key)
		}
	}
	if v := getenv("BROWSER_SESSION_TTL_SECONDS"); v != "" {
		secs, err := strconv.Atoi(v)
		if err != nil || secs <= 0 {
			return Config{}, fmt.Errorf("%w: BROWSER_SESSION_TTL_SECONDS: %q is not a positive whole number of seconds", ErrConfig, v)
		}
		cfg.BrowserSessionTTL = time.Duration(secs) * time.Second
	}
	if v := getenv("BROWSER_MAX_SESSIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return Config{}, fmt.Errorf("%w: BROWSER_MAX_SESSIONS: %q is not a positive whole number", ErrConfig, v)
		}
		cfg.BrowserMaxSessions = n
	}
	if v := getenv("BROWSER_ALLOW_NO_SANDBOX"); v != "" {
		allow, err := strconv.ParseBool(v)
		if err != nil {
			return Config{}, fmt.Errorf("%w: BROWSER_ALLOW_NO_SANDBOX: %q is not a boolean (use 1 or 0)", ErrConfig, v)
		}
		cfg.BrowserAllowNoSandbox = allow
	}
	if v := getenv("CONNECT_WINDOW_SECONDS"); v != "" {
		secs, err := strconv.Atoi(v)
		if err != nil || secs <= 0 {
			return Config{}, fmt.Errorf("%w: CONNECT_WINDOW_SECONDS: %q is not a positive whole number of seconds", ErrConfig, v)
		}
		cfg.ConnectWindow = time.Duration(secs) * time.Second
	}
	for _, n := range []struct {
		name     string
		min, max int64
		set      func(int64)
	}{
		{"JOTS_MAX_BYTES", 1, 1 << 30, func(v int64) { cfg.JotMaxBytes = v }},
		{"JOTS_MAX_FILES", 1, 100000, func(v int64) { cfg.JotMaxFiles = int(v) }},
		{"JOTS_UPLOAD_TTL_SECONDS", 1, 86400, func(v int64) { cfg.JotUploadTTL = time.Duration(v) * time.Second }},
		{"JOTS_MAX_PER_USER", 1, 1000000, func(v int64) { cfg.JotMaxPerUser = int(v) }},
		{"JOTS_MAX_BYTES_PER_USER", 1, 1 << 40, func(v int64) { cfg.JotMaxBytesPerUser = v }},
		{"PASSWORD_HASH_CONCURRENCY", 1, 256, func(v int64) { cfg.PasswordHashConcurrency = int(v) }},
		{"WORKBENCH_MAX_BYTES", 1, 1 << 40, func(v int64) { cfg.WorkbenchMaxBytes = v }},
		{"WORKBENCH_MAX_FILES", 1, 10_000_000, func(v int64) { cfg.WorkbenchMaxFiles = int(v) }},
		{"WORKBENCH_MAX_PLANS", 1, 10_000, func(v int64) { cfg.WorkbenchMaxPlans = int(v) }},
		{"WORKBENCH_IDLE_SECONDS", 60, 365 * 86400, func(v int64) { cfg.WorkbenchIdle = time.Duration(v) * time.Second }},
	} {
		v := getenv(n.name)
		if v == "" {
			continue
		}
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil || x < n.min || x > n.max {
			return Config{}, fmt.Errorf("%w: %s: %q is not a whole number from %d to %d", ErrConfig, n.name, v, n.min, n.max)
		}
		n.set(x)
	}
	if v := getenv("TRUSTED_PROXIES"); v != "" {
		r, err := clientaddr.Parse(v)
		if err != nil {
			return Config{}, fmt.Errorf("%w: TRUSTED_PROXIES: %v", ErrConfig, err)
		}
		cfg.TrustedProxies = r
	}
	if v := getenv("EGRESS_ALLOW_PRIVATE"); v != "" {
		allow, err := strconv.ParseBool(v)
		if err != nil {
			return Config{}, fmt.Errorf("%w: EGRESS_ALLOW_PRIVATE: %q is not a boolean (use 1 or 0)", ErrConfig, v)
		}
		cfg.EgressAllowPrivate = allow
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// withDefaults returns cfg with every unset field set to its default.
func (cfg Config) withDefaults() Config {
	if cfg.ListenAddr == "" {
		cfg.ListenAddr = DefaultListenAddr
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = "http://" + cfg.ListenAddr
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	cfg.JotsPublicURL = strings.TrimRight(cfg.JotsPublicURL, "/")
	if cfg.DataDir == "" {
		cfg.DataDir = DefaultDataDir
	}
	if cfg.BuiltinPluginsDir == "" {
		cfg.BuiltinPluginsDir = DefaultBuiltinPluginsDir
	}
	if cfg.ToolSurface == "" {
		cfg.ToolSurface = DefaultToolSurface
	}
	if cfg.BrowserSessionTTL == 0 {
		cfg.BrowserSessionTTL = DefaultBrowserSessionTTL
	}
	if cfg.ConnectWindow == 0 {
		cfg.ConnectWindow = DefaultConnectWindow
	}
	return cfg
}

// Validate checks a configuration whose defaults are applied. Errors wrap
// ErrConfig and name the environment variable of the field at fault.
func (cfg Config) Validate() error {
	if _, port, err := net.SplitHostPort(cfg.ListenAddr); err != nil || port == "" {
		return fmt.Errorf("%w: LISTEN_ADDR: %q is not host:port", ErrConfig, cfg.ListenAddr)
	}
	u, err := url.Parse(cfg.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: SERVER_PUBLIC_URL: %q is not an absolute http(s) URL", ErrConfig, cfg.PublicURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%w: SERVER_PUBLIC_URL: %q must not have a query or fragment", ErrConfig, cfg.PublicURL)
	}
	if err := cfg.validateJotsURL(u); err != nil {
		return err
	}
	if cfg.EncryptionKey != nil && len(cfg.EncryptionKey) != encryptionKeyBytes {
		return fmt.Errorf("%w: ENCRYPTION_KEY: key is %d bytes, want %d", ErrConfig, len(cfg.EncryptionKey), encryptionKeyBytes)
	}
	for i, k := range cfg.EncryptionKeysOld {
		if len(k) != encryptionKeyBytes {
			return fmt.Errorf("%w: ENCRYPTION_KEYS_OLD: key %d is %d bytes, want %d", ErrConfig, i+1, len(k), encryptionKeyBytes)
		}
	}
	switch cfg.ToolSurface {
	case SurfaceMeta, SurfaceDirect, SurfaceBoth:
	default:
		return fmt.Errorf("%w: MCP_TOOL_SURFACE: %q is not one of meta, direct, both", ErrConfig, cfg.ToolSurface)
	}
	if cfg.ConnectWindow < time.Second {
		return fmt.Errorf("%w: CONNECT_WINDOW_SECONDS: %v is shorter than one second", ErrConfig, cfg.ConnectWindow)
	}
	if cfg.BrowserSessionTTL < time.Second {
		return fmt.Errorf("%w: BROWSER_SESSION_TTL_SECONDS: %v is shorter than one second", ErrConfig, cfg.BrowserSessionTTL)
	}
	return nil
}

// validateJotsURL checks JOTS_PUBLIC_URL against the app's public URL.
func (cfg Config) validateJotsURL(app *url.URL) error {
	if cfg.JotsPublicURL == "" {
		return nil
	}
	u, err := url.Parse(cfg.JotsPublicURL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("%w: JOTS_PUBLIC_URL: %q is not an absolute http(s) URL", ErrConfig, cfg.JotsPublicURL)
	case u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Errorf("%w: JOTS_PUBLIC_URL: %q must be an origin only (scheme, host, port), without path, query or user", ErrConfig, cfg.JotsPublicURL)
	case strings.EqualFold(u.Hostname(), app.Hostname()):
		return fmt.Errorf("%w: JOTS_PUBLIC_URL: host %q is SERVER_PUBLIC_URL's host; jots need another host name (cookies do not tell ports apart)", ErrConfig, u.Hostname())
	}
	return nil
}

func parseEncryptionKey(v string) ([]byte, error) {
	if len(v) != 2*encryptionKeyBytes {
		return nil, fmt.Errorf("want %d hex characters, got %d", 2*encryptionKeyBytes, len(v))
	}
	key, err := hex.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("not hexadecimal: %v", err)
	}
	return key, nil
}
