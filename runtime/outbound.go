package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/runtime/manifest"
)

// MaxRequestHeadBytes caps the JSON head of one http_request.
const MaxRequestHeadBytes = 1 << 20

// egressRules is a plugin's view of the egress layer: where it may go and
// how its credential is attached.
type egressRules struct {
	static    []egress.Destination // manifest hosts, manifest baseUrl, operator base URL
	internal  []egress.Destination // the operator base URL, which may be on an internal address
	templated []string             // manifest hosts with {field} labels, filled per user
	scheme    credential.Scheme
	baseURL   string
	fields    map[string]bool // non-secret apikey fields, readable with config_get

	requests atomic.Uint64
	denied   atomic.Uint64
}

func newEgressRules(m *manifest.Manifest, settings SettingsSource) (*egressRules, error) {
	r := &egressRules{baseURL: m.BaseURL, fields: map[string]bool{}, scheme: credential.SchemeOf(&m.Auth)}
	if err := r.scheme.Validate(); err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	override, operator := settings.Setting(m.Name, "base_url")
	if operator {
		r.baseURL = override
	}
	for _, raw := range []string{m.BaseURL, override} {
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("base URL %q: %w", raw, err)
		}
		d, err := egress.ParseDestination(u.Scheme + "://" + u.Host)
		if err != nil {
			return nil, fmt.Errorf("base URL %q: %w", raw, err)
		}
		r.static = append(r.static, d)
		if raw == override {
			r.internal = append(r.internal, d)
		}
	}
	for _, h := range m.Hosts {
		if strings.Contains(h, "{") {
			r.templated = append(r.templated, h)
			continue
		}
		d, err := egress.ParseDestination(h)
		if err != nil {
			return nil, fmt.Errorf("hosts: %w", err)
		}
		r.static = append(r.static, d)
	}
	if m.Auth.APIKey != nil {
		for _, f := range m.Auth.APIKey.Fields {
			if !f.Secret {
				r.fields[f.Name] = true
			}
		}
	}
	return r, nil
}

// hostLabelRe is what a connection field must look like to fill a {field}
// label of a host pattern: one DNS label, nothing that could widen the host.
var hostLabelRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// policy is the egress policy for one user's call.
func (r *egressRules) policy(cred *credential.Credential) egress.Policy {
	p := egress.Policy{Allow: r.static, Internal: r.internal}
	if len(r.templated) == 0 || cred == nil {
		return p
	}
	p.Allow = append([]egress.Destination(nil), r.static...)
	for _, h := range r.templated {
		filled, ok := fillHost(h, cred.Fields)
		if !ok {
			continue
		}
		if d, err := egress.ParseDestination(filled); err == nil {
			p.Allow = append(p.Allow, d)
		}
	}
	return p
}

// fillHost replaces {field} labels with the user's field values; it fails
// when a value is missing or is not a single DNS label.
func fillHost(pattern string, fields map[string]string) (string, bool) {
	ok := true
	out := templateLabel.ReplaceAllStringFunc(pattern, func(m string) string {
		v := strings.ToLower(fields[m[1:len(m)-1]])
		if !hostLabelRe.MatchString(v) {
			ok = false
		}
		return v
	})
	return out, ok
}

var templateLabel = regexp.MustCompile(`\{[a-z0-9_]+\}`)

// credentialState caches one call's credential lookup.
type credentialState struct {
	cred *credential.Credential
	err  *failure.Error
}

// credential returns the calling user's credential, looked up once per call.
// A none-mode plugin has none.
func (st *callState) credential(ctx context.Context) (*credential.Credential, *failure.Error) {
	if st.cred != nil {
		return st.cred.cred, st.cred.err
	}
	st.cred = &credentialState{}
	m := st.plugin.manifest
	if m.Auth.Mode == manifest.ModeNone {
		return nil, nil
	}
	cred, err := st.plugin.host.cfg.Credentials.Credential(ctx, st.user, m.Name)
	switch {
	case errors.Is(err, failure.ErrNotConnected):
		st.cred.err = toolError(failure.NotConnected, fmt.Sprintf("you are not connected to %s: call connect('%s') first", m.Name, m.Name))
	case err != nil:
		// The store failed, not the connection: reconnecting would not help.
		st.plugin.logger.Error("credential lookup failed", "user", st.user, "error", err)
		st.cred.err = &failure.Error{
			Code:    failure.Unavailable,
			Message: fmt.Sprintf("the credential for %s could not be read; try again later", m.Name),
			Cause:   err,
		}
	default:
		st.cred.cred = cred
	}
	return st.cred.cred, st.cred.err
}

// config answers config_get: base_url, a declared setting, or a non-secret
// connection field.
func (p *Plugin) config(ctx context.Context, st *callState, key string) (string, bool) {
	m := p.manifest
	if key == "base_url" {
		return p.egress.baseURL, p.egress.baseURL != ""
	}
	for _, s := range m.Settings {
		if s.Name != key {
			continue
		}
		if v, ok := p.host.cfg.Settings.Setting(m.Name, key); ok {
			return v, true
		}
		return s.Default, s.Default != ""
	}
	if !p.egress.fields[key] {
		return "", false
	}
	cred, _ := st.credential(ctx)
	if cred == nil {
		return "", false
	}
	v, ok := cred.Fields[key]
	return v, ok && v != ""
}

// outboundRequest is the JSON head of http_request (docs/abi.md, section 5).
type outboundRequest struct {
	Method    string       `json:"method"`
	URL       string       `json:"url"`
	Headers   headerValues `json:"headers"`
	TimeoutMs int          `json:"timeoutMs"`
}

// headerValues accepts each header as a string or a list of strings.
type headerValues map[string][]string

func (h *headerValues) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*h = make(headerValues, len(raw))
	for k, v := range raw {
		var one string
		if json.Unmarshal(v, &one) == nil {
			(*h)[k] = []string{one}
			continue
		}
		var many []string
		if err := json.Unmarshal(v, &many); err != nil {
			return fmt.Errorf("header %q must be a string or a list of strings", k)
		}
		(*h)[k] = many
	}
	return nil
}

// outboundHead is the JSON head of an http_request result.
type outboundHead struct {
	Status  int                 `json:"status"`
	Headers map[string][]string `json:"headers"`
	URL     string              `json:"url"`
}

// httpRequest performs one http_request for the call in st.
func (p *Plugin) httpRequest(ctx context.Context, st *callState, head, body []byte) ([]byte, []byte, *failure.Error) {
	p.egress.requests.Add(1)
	st.requests++
	if st.requests > MaxRequestsPerCall {
		return nil, nil, toolError(failure.TooManyRequests, fmt.Sprintf("a call may make at most %d http_request calls", MaxRequestsPerCall))
	}
	if len(head) > MaxRequestHeadBytes {
		return nil, nil, toolError(failure.InvalidRequest, fmt.Sprintf("request head of %d bytes is over the limit of %d", len(head), MaxRequestHeadBytes))
	}
	var req outboundRequest
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, nil, toolError(failure.InvalidRequest, "request is not valid: "+err.Error())
	}
	cred, terr := st.credential(ctx)
	if terr != nil {
		return nil, nil, terr
	}
	timeout := time.Duration(req.TimeoutMs) * time.Millisecond
	if deadline, ok := ctx.Deadline(); ok && (timeout <= 0 || time.Until(deadline) < timeout) {
		timeout = time.Until(deadline)
	}
	r := egress.Request{
		Method:  req.Method,
		URL:     req.URL,
		Header:  http.Header(req.Headers),
		Body:    bytes.Clone(body),
		Timeout: timeout,
	}
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	var inj egress.Injector
	if p.manifest.Auth.Mode != manifest.ModeNone {
		inj = p.egress.scheme.Bind(cred)
	}
	resp, err := p.host.cfg.Egress.Do(ctx, p.egress.policy(cred), r, inj, egress.Limits{MaxResponseBytes: st.tool.limits.ResponseBytes})
	if err != nil {
		return nil, nil, p.egressError(st, err)
	}
	p.takeCookies(ctx, st, cred, resp)
	out, err := json.Marshal(outboundHead{Status: resp.Status, Headers: resp.Header, URL: resp.URL})
	if err != nil {
		return nil, nil, toolError(failure.InvalidRequest, err.Error())
	}
	return out, resp.Body, nil
}

// takeCookies removes Set-Cookie and Set-Cookie2 from resp, so that no
// plugin sees a cookie a service sets (for a cookie-mode integration, a
// rotated session cookie is a credential). For a cookie-mode integration the
// cookies are merged into the user's stored bundle instead, and into this
// call's copy of it, which the call's next requests use.
func (p *Plugin) takeCookies(ctx context.Context, st *callState, cred *credential.Credential, resp *egress.Response) {
	var received []*http.Cookie
	if u, err := url.Parse(resp.URL); err == nil && cred != nil {
		received = p.egress.scheme.ReceivedCookies(u, resp.Header, time.Now())
	}
	resp.Header.Del("Set-Cookie")
	resp.Header.Del("Set-Cookie2")
	if len(received) == 0 {
		return
	}
	cred.Cookies = credential.MergeCookies(cred.Cookies, received, time.Now())
	if err := p.host.cfg.Credentials.UpdateCookies(ctx, st.user, p.manifest.Name, received); err != nil {
		p.logger.Warn("storing the cookies a response set failed", "tool", st.tool.Slug, "user", st.user, "error", err)
	}
}

func (p *Plugin) egressError(st *callState, err error) *failure.Error {
	var ee *egress.Error
	if !errors.As(err, &ee) {
		return toolError(failure.UpstreamUnreachable, err.Error())
	}
	if errors.Is(err, egress.ErrDenied) {
		p.egress.denied.Add(1)
		p.logger.Warn("egress denied", "tool", st.tool.Slug, "user", st.user, "reason", ee.Message)
	}
	return toolError(ee.Code, ee.Message)
}
