package credential

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/workbench-dev/workbench/failure"
)

const (
	secretToken = "gho_SECRET_token_value_1234"
	secretKey   = "key-SECRET-5678"
	secretJar   = "session-SECRET-9abc"
)

func secretCredential() *Credential {
	return &Credential{
		AccessToken: secretToken,
		Fields:      map[string]string{"api_key": secretKey, "email": "user@example.com"},
		Cookies:     []*http.Cookie{{Name: "sid", Value: secretJar, Domain: "example.com"}},
	}
}

func assertNoSecret(t *testing.T, out string) {
	t.Helper()
	for _, s := range []string{secretToken, secretKey, secretJar, "user@example.com"} {
		if strings.Contains(out, s) {
			t.Fatalf("output reveals %q: %s", s, out)
		}
	}
}

func TestCredential_Format(t *testing.T) {
	c := secretCredential()
	type wrapper struct {
		Name string
		Cred *Credential
		Val  Credential
	}
	tests := []struct {
		name string
		out  string
	}{
		{"pointer verbs", fmt.Sprintf("%v %+v %#v %s %q %x %X %d", c, c, c, c, c, c, c, c)},
		{"value verbs", fmt.Sprintf("%v %+v %#v %s %q %x", *c, *c, *c, *c, *c, *c)},
		{"nested in struct", fmt.Sprintf("%v %+v %#v", wrapper{"w", c, *c}, wrapper{"w", c, *c}, &wrapper{"w", c, *c})},
		{"in slice and map", fmt.Sprintf("%v %+v %#v", []*Credential{c}, map[string]Credential{"k": *c}, []any{c, *c})},
		{"String", c.String()},
		{"Sprint", fmt.Sprint(c, *c) + fmt.Sprintln(c)},
		{"error wrap", fmt.Errorf("failed with %v", c).Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertNoSecret(t, tt.out)
			if !strings.Contains(tt.out, "redacted") {
				t.Fatalf("output does not say redacted: %s", tt.out)
			}
		})
	}
}

func TestCredential_String(t *testing.T) {
	tests := []struct {
		c    Credential
		want string
	}{
		{Credential{AccessToken: secretToken}, "credential{oauth2 token:redacted}"},
		{Credential{Fields: map[string]string{"a": "b", "c": "d"}}, "credential{apikey fields:2 values:redacted}"},
		{Credential{Cookies: []*http.Cookie{{Name: "a", Value: "b"}}}, "credential{cookie cookies:1 values:redacted}"},
		{Credential{}, "credential{empty}"},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
		if got := fmt.Sprintf("%+v", tt.c); got != tt.want {
			t.Errorf("%%+v = %q, want %q", got, tt.want)
		}
	}
}

func TestCredential_LogValue(t *testing.T) {
	c := secretCredential()
	for _, h := range []struct {
		name string
		new  func(*bytes.Buffer) slog.Handler
	}{
		{"text", func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) }},
		{"json", func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) }},
	} {
		t.Run(h.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(h.new(&buf))
			log.Info("calling", "cred", c, "val", *c, slog.Any("any", c), slog.Group("g", "cred", c))
			log.With("cred", c).Warn("again")
			out := buf.String()
			assertNoSecret(t, out)
			if strings.Count(out, "oauth2 token:redacted") != 5 {
				t.Fatalf("expected 5 redacted summaries, got: %s", out)
			}
		})
	}
}

func TestMemory_Credential(t *testing.T) {
	m := NewMemory()
	ctx := context.Background()

	if _, err := m.Credential(ctx, "u1", "github"); !errors.Is(err, failure.ErrNotConnected) {
		t.Fatalf("empty store: err = %v, want failure.ErrNotConnected", err)
	}

	orig := secretCredential()
	m.Set("u1", "github", orig)
	// Changing the caller's copy must not change the stored one.
	orig.AccessToken = "changed"
	orig.Fields["api_key"] = "changed"
	orig.Cookies[0].Value = "changed"

	got, err := m.Credential(ctx, "u1", "github")
	if err != nil {
		t.Fatal(err)
	}
	if got.AccessToken != secretToken || got.Fields["api_key"] != secretKey || got.Cookies[0].Value != secretJar {
		t.Fatalf("stored credential was aliased: %#v", got.Fields)
	}
	// Changing a returned copy must not change the stored one.
	got.Fields["api_key"] = "mutated"
	again, _ := m.Credential(ctx, "u1", "github")
	if again.Fields["api_key"] != secretKey {
		t.Fatal("returned credential aliases the stored one")
	}

	tests := []struct {
		user, integration string
		connected         bool
	}{
		{"u1", "github", true},
		{"u2", "github", false}, // strictly per user
		{"u1", "slack", false},
		{"U1", "github", false},
	}
	for _, tt := range tests {
		_, err := m.Credential(ctx, tt.user, tt.integration)
		if tt.connected != (err == nil) {
			t.Errorf("Credential(%q, %q) err = %v, connected want %v", tt.user, tt.integration, err, tt.connected)
		}
		if err != nil && !errors.Is(err, failure.ErrNotConnected) {
			t.Errorf("Credential(%q, %q) err = %v, want failure.ErrNotConnected", tt.user, tt.integration, err)
		}
	}

	m.Delete("u1", "github")
	if _, err := m.Credential(ctx, "u1", "github"); !errors.Is(err, failure.ErrNotConnected) {
		t.Fatalf("after Delete: err = %v", err)
	}
	m.Set("u1", "github", secretCredential())
	m.Set("u1", "github", nil)
	if _, err := m.Credential(ctx, "u1", "github"); !errors.Is(err, failure.ErrNotConnected) {
		t.Fatalf("after Set(nil): err = %v", err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	m.Set("u1", "github", secretCredential())
	if _, err := m.Credential(cancelled, "u1", "github"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx: err = %v", err)
	}
}

func TestMemory_Concurrent(t *testing.T) {
	var m Memory // the zero value is ready
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			user := fmt.Sprintf("u%d", g%3)
			for i := range 500 {
				switch i % 3 {
				case 0:
					m.Set(user, "github", &Credential{AccessToken: fmt.Sprint(i), Fields: map[string]string{"n": "v"}})
				case 1:
					if c, err := m.Credential(ctx, user, "github"); err == nil {
						c.Fields["n"] = "w" // must not race with other readers
					} else if !errors.Is(err, failure.ErrNotConnected) {
						t.Error(err)
					}
				case 2:
					m.Delete(user, "github")
				}
			}
		}()
	}
	wg.Wait()
}
