package fakeoauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Config describes the client the provider knows.
type Config struct {
	ClientID     string
	ClientSecret string
	// TokenAuth is how the client must authenticate at the token endpoint:
	// "basic" (HTTP Basic) or "post" (client_id and client_secret in the
	// body). The other way is refused with invalid_client.
	TokenAuth string
	// RedirectURI is the only redirect URI the client registered.
	RedirectURI string
	// ExpiresIn is the access token lifetime in seconds it announces; 0
	// means tokens do not expire (expires_in is left out).
	ExpiresIn int
}

// Provider is a running fake. Its methods are safe for concurrent use.
type Provider struct {
	cfg    Config
	server *httptest.Server

	mu        sync.Mutex
	expiresIn int    // cfg.ExpiresIn, changed by SetExpiresIn
	deny      string // error the authorization endpoint answers with, if set
	seq       int
	codes     map[string]*grant // unused codes
	refresh   map[string]bool   // live refresh tokens
	access    map[string]bool   // issued access tokens
	scopes    []string          // scope of the last authorization request
	exchanges int               // successful code exchanges
	refreshes int               // successful refreshes
}

// grant is an issued authorization code.
type grant struct {
	challenge   string
	redirectURI string
}

// Start starts a provider on 127.0.0.1 and stops it when t ends.
func Start(t testing.TB, cfg Config) *Provider {
	t.Helper()
	p := &Provider{cfg: cfg, expiresIn: cfg.ExpiresIn, codes: map[string]*grant{}, refresh: map[string]bool{}, access: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.server = &httptest.Server{Listener: ln, Config: &http.Server{Handler: mux}}
	p.server.Start()
	t.Cleanup(p.server.Close)
	return p
}

// AuthorizeURL is the authorization endpoint.
func (p *Provider) AuthorizeURL() string { return p.server.URL + "/authorize" }

// TokenURL is the token endpoint.
func (p *Provider) TokenURL() string { return p.server.URL + "/token" }

// Deny makes the authorization endpoint answer with the OAuth error code
// (access_denied, say); "" approves again.
func (p *Provider) Deny(code string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deny = code
}

// SetExpiresIn changes the access token lifetime announced from now on.
func (p *Provider) SetExpiresIn(seconds int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expiresIn = seconds
}

// IssueCode issues a code bound to a PKCE challenge of the caller's choosing,
// as if the user had authorized a request carrying it.
func (p *Provider) IssueCode(challenge string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.newCode(challenge, p.cfg.RedirectURI)
}

// RevokeRefreshTokens revokes every refresh token, as a user revoking the
// app's access would.
func (p *Provider) RevokeRefreshTokens() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.refresh)
}

// Scopes returns the scopes of the last authorization request.
func (p *Provider) Scopes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.scopes...)
}

// Counts returns how many code exchanges and refreshes succeeded.
func (p *Provider) Counts() (exchanges, refreshes int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exchanges, p.refreshes
}

// Issued reports whether the provider issued this access token.
func (p *Provider) Issued(accessToken string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.access[accessToken]
}

func (p *Provider) newCode(challenge, redirectURI string) string {
	p.seq++
	code := fmt.Sprintf("code-%d", p.seq)
	p.codes[code] = &grant{challenge: challenge, redirectURI: redirectURI}
	return code
}

// authorize checks the request and sends the browser back with a code (or
// the configured error).
func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch {
	case q.Get("client_id") != p.cfg.ClientID:
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	case q.Get("redirect_uri") != p.cfg.RedirectURI:
		// Never redirect to an unregistered URI.
		http.Error(w, "redirect_uri does not match the registered one", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(p.cfg.RedirectURI)
	answer := url.Values{"state": {q.Get("state")}}
	p.mu.Lock()
	p.scopes = strings.Fields(q.Get("scope"))
	switch {
	case q.Get("response_type") != "code":
		answer.Set("error", "unsupported_response_type")
	case q.Get("state") == "":
		answer.Set("error", "invalid_request")
		answer.Set("error_description", "state is required")
	case q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43:
		answer.Set("error", "invalid_request")
		answer.Set("error_description", "PKCE with S256 is required")
	case p.deny != "":
		answer.Set("error", p.deny)
		answer.Set("error_description", "The user declined.")
	default:
		answer.Set("code", p.newCode(q.Get("code_challenge"), q.Get("redirect_uri")))
	}
	p.mu.Unlock()
	back.RawQuery = answer.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token serves the authorization_code and refresh_token grants.
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body is not a form")
		return
	}
	if msg := p.authenticate(r); msg != "" {
		oauthError(w, http.StatusUnauthorized, "invalid_client", msg)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		code := r.PostForm.Get("code")
		g, ok := p.codes[code]
		if !ok {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the code is unknown or was already used")
			return
		}
		delete(p.codes, code) // single use, even when the rest fails
		if r.PostForm.Get("redirect_uri") != g.redirectURI {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request")
			return
		}
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(g.challenge)) != 1 {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "PKCE verification failed: code_verifier does not match code_challenge")
			return
		}
		p.exchanges++
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		if !p.refresh[rt] {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "The refresh token is invalid or was revoked.")
			return
		}
		delete(p.refresh, rt) // rotated
		p.refreshes++
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "")
		return
	}
	p.seq++
	at, rt := fmt.Sprintf("at-%d", p.seq), fmt.Sprintf("rt-%d", p.seq)
	p.access[at], p.refresh[rt] = true, true
	body := map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt}
	if p.expiresIn > 0 {
		body["expires_in"] = p.expiresIn
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(body)
}

// authenticate checks the client authentication method and credentials and
// returns what is wrong, or "".
func (p *Provider) authenticate(r *http.Request) string {
	user, pass, basic := r.BasicAuth()
	inBody := r.PostForm.Has("client_secret")
	switch p.cfg.TokenAuth {
	case "basic":
		if !basic || inBody {
			return "this client must authenticate with HTTP Basic only"
		}
		id, err1 := url.QueryUnescape(user)
		secret, err2 := url.QueryUnescape(pass)
		if err1 != nil || err2 != nil || id != p.cfg.ClientID || secret != p.cfg.ClientSecret {
			return "wrong client credentials"
		}
	case "post":
		if basic || !inBody {
			return "this client must send client_id and client_secret in the body"
		}
		if r.PostForm.Get("client_id") != p.cfg.ClientID || r.PostForm.Get("client_secret") != p.cfg.ClientSecret {
			return "wrong client credentials"
		}
	default:
		return "the fake is misconfigured: TokenAuth must be basic or post"
	}
	return ""
}

func oauthError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]string{"error": code}
	if description != "" {
		body["error_description"] = description
	}
	json.NewEncoder(w).Encode(body)
}
