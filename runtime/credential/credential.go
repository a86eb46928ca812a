package credential

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/workbench-dev/workbench/failure"
)

// Credential is one user's secret material for one integration. Only the part
// that matches the integration's Scheme mode is used.
//
// Credential redacts itself when printed with fmt or logged with slog.
type Credential struct {
	AccessToken string            // oauth2
	Fields      map[string]string // apikey: every field the user stored, secret or not
	Cookies     []*http.Cookie    // cookie
}

// String returns a summary that never contains a secret, such as
// "credential{oauth2 token:redacted}".
func (c Credential) String() string {
	var parts []string
	if c.AccessToken != "" {
		parts = append(parts, "oauth2 token:redacted")
	}
	if len(c.Fields) > 0 {
		parts = append(parts, "apikey fields:"+strconv.Itoa(len(c.Fields))+" values:redacted")
	}
	if len(c.Cookies) > 0 {
		parts = append(parts, "cookie cookies:"+strconv.Itoa(len(c.Cookies))+" values:redacted")
	}
	if len(parts) == 0 {
		return "credential{empty}"
	}
	return "credential{" + strings.Join(parts, " ") + "}"
}

// Format implements fmt.Formatter so that every verb and flag (%v, %+v, %#v,
// %s, %q, %x, ...) prints the redacted String.
func (c Credential) Format(f fmt.State, _ rune) {
	_, _ = io.WriteString(f, c.String())
}

// LogValue implements slog.LogValuer with the redacted String.
func (c Credential) LogValue() slog.Value {
	return slog.StringValue(c.String())
}

// clone returns a deep copy, so a caller cannot change a stored credential
// through a pointer it kept.
func (c *Credential) clone() *Credential {
	out := &Credential{AccessToken: c.AccessToken}
	if c.Fields != nil {
		out.Fields = make(map[string]string, len(c.Fields))
		for k, v := range c.Fields {
			out.Fields[k] = v
		}
	}
	for _, ck := range c.Cookies {
		if ck == nil {
			continue
		}
		cp := *ck
		cp.Unparsed = append([]string(nil), ck.Unparsed...)
		out.Cookies = append(out.Cookies, &cp)
	}
	return out
}

// Source gives the runtime a user's credential for an integration. The server's
// store implements it; Memory is an in-memory implementation.
type Source interface {
	// Credential returns the user's credential, or an error wrapping
	// failure.ErrNotConnected when the user has none. Any other error
	// means the credential could not be read (the store failed), which the
	// runtime reports as UNAVAILABLE, not as a missing connection.
	Credential(ctx context.Context, userID, integration string) (*Credential, error)
	// UpdateCookies merges cookies that a cookie-mode integration's response
	// set (Scheme.ReceivedCookies) into the user's stored bundle
	// (MergeCookies), so a rotated session cookie is kept by the host
	// rather than shown to the plugin. A bundle left without a live cookie
	// means the service ended the session: the user is then not connected.
	// It returns an error wrapping failure.ErrNotConnected when there is no
	// bundle to update.
	UpdateCookies(ctx context.Context, userID, integration string, received []*http.Cookie) error
}

// Memory is an in-memory Source for tests and the CLI. It is safe for
// concurrent use; the zero value is empty and ready.
type Memory struct {
	mu    sync.RWMutex
	creds map[memoryKey]*Credential
}

type memoryKey struct{ userID, integration string }

var _ Source = (*Memory)(nil)

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{} }

// Set stores a copy of c for the user and integration, replacing any earlier
// one. A nil c deletes.
func (s *Memory) Set(userID, integration string, c *Credential) {
	if c == nil {
		s.Delete(userID, integration)
		return
	}
	cp := c.clone()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.creds == nil {
		s.creds = make(map[memoryKey]*Credential)
	}
	s.creds[memoryKey{userID, integration}] = cp
}

// Delete removes the user's credential for the integration, if any.
func (s *Memory) Delete(userID, integration string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.creds, memoryKey{userID, integration})
}

// UpdateCookies merges received into the stored credential's cookies
// (MergeCookies), or returns an error wrapping failure.ErrNotConnected.
func (s *Memory) UpdateCookies(ctx context.Context, userID, integration string, received []*http.Cookie) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.creds[memoryKey{userID, integration}]
	if !ok {
		return notConnected(userID, integration)
	}
	c.Cookies = (&Credential{Cookies: MergeCookies(c.Cookies, received, time.Now())}).clone().Cookies
	return nil
}

// Credential returns a copy of the stored credential, or an error wrapping
// failure.ErrNotConnected.
func (s *Memory) Credential(ctx context.Context, userID, integration string) (*Credential, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	c, ok := s.creds[memoryKey{userID, integration}]
	s.mu.RUnlock()
	if !ok {
		return nil, notConnected(userID, integration)
	}
	return c.clone(), nil
}

func notConnected(userID, integration string) error {
	return fmt.Errorf("credential: user %q has no %q connection: %w", userID, integration, failure.ErrNotConnected)
}
