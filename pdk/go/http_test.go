//go:build !wasip1

package pdk

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestHeader(t *testing.T) {
	h := Header{}
	h.Set("content-type", "text/plain")
	h.Add("X-GITHUB-API-VERSION", "2022-11-28")
	h.Add("x-github-api-version", "later")
	if !reflect.DeepEqual(h, Header{"Content-Type": {"text/plain"}, "X-Github-Api-Version": {"2022-11-28", "later"}}) {
		t.Errorf("header = %v", h)
	}
	if got := h.Get("CONTENT-TYPE"); got != "text/plain" {
		t.Errorf("Get = %q", got)
	}
	raw := Header{"link": {"<x>"}}
	if got := raw.Get("Link"); got != "<x>" {
		t.Errorf("Get on a non-canonical key = %q", got)
	}
	h.Del("X-Github-API-Version")
	if h.Values("x-github-api-version") != nil || len(h) != 1 {
		t.Errorf("after Del: %v", h)
	}
	if got := h.Get("missing"); got != "" {
		t.Errorf("Get(missing) = %q", got)
	}
}

type httpProbe struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
	Final  string `json:"final"`
	Type   string `json:"type"`
}

func TestHTTPClient_Do(t *testing.T) {
	var seen *Request
	host := &TestHost{HTTP: func(req *Request) (*Response, error) {
		seen = req
		switch req.URL {
		case "https://api.example.com/denied":
			return nil, &Error{Code: "EGRESS_DENIED", Message: "host not allowed"}
		case "https://api.example.com/down":
			return nil, errors.New("connection refused")
		}
		return &Response{Status: 201, Header: Header{"Content-Type": {"application/json"}},
			Body: []byte(`{"ok":true}`), URL: req.URL + "?final"}, nil
	}}
	client := &HTTPClient{Header: Header{"Accept": {"application/json"}, "User-Agent": {"pdk-test"}}, Timeout: 5 * time.Second}
	tests := []struct {
		name       string
		send       func() (*Response, error)
		wantReq    *Request
		wantStatus int
		wantCode   string
	}{
		{name: "get with client defaults",
			send: func() (*Response, error) { return client.Get("https://api.example.com/x") },
			wantReq: &Request{Method: "GET", URL: "https://api.example.com/x", Timeout: 5 * time.Second,
				Header: Header{"Accept": {"application/json"}, "User-Agent": {"pdk-test"}}},
			wantStatus: 201},
		{name: "request headers override client defaults in any case",
			send: func() (*Response, error) {
				return client.Do(&Request{Method: "PATCH", URL: "https://api.example.com/y", Header: Header{"accept": {"text/plain"}},
					Body: []byte("raw"), Timeout: time.Second})
			},
			wantReq: &Request{Method: "PATCH", URL: "https://api.example.com/y", Timeout: time.Second, Body: []byte("raw"),
				Header: Header{"accept": {"text/plain"}, "User-Agent": {"pdk-test"}}},
			wantStatus: 201},
		{name: "json body",
			send: func() (*Response, error) {
				return HTTP.SendJSON("POST", "https://api.example.com/z", map[string]int{"a": 1})
			},
			wantReq: &Request{Method: "POST", URL: "https://api.example.com/z", Body: []byte(`{"a":1}`),
				Header: Header{"Content-Type": {"application/json"}}},
			wantStatus: 201},
		{name: "post",
			send: func() (*Response, error) { return HTTP.Post("https://api.example.com/p", "text/csv", []byte("a,b")) },
			wantReq: &Request{Method: "POST", URL: "https://api.example.com/p", Body: []byte("a,b"),
				Header: Header{"Content-Type": {"text/csv"}}},
			wantStatus: 201},
		{name: "host refusal keeps the host's code",
			send:     func() (*Response, error) { return HTTP.Get("https://api.example.com/denied") },
			wantCode: "EGRESS_DENIED"},
		{name: "unreachable upstream",
			send:     func() (*Response, error) { return HTTP.Get("https://api.example.com/down") },
			wantCode: "UPSTREAM_UNREACHABLE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen = nil
			var resp *Response
			var err error
			tool := Tool("test_http", "HTTP.", func(Context, struct{}) (httpProbe, error) {
				resp, err = tt.send()
				return httpProbe{}, nil
			})
			if status, out := host.Call(tool, nil); status != statusOK {
				t.Fatalf("status %d, output %s", status, out)
			}
			if tt.wantCode != "" {
				var pe *Error
				if !errors.As(err, &pe) || pe.Code != tt.wantCode {
					t.Fatalf("err = %v, want code %s", err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(seen, tt.wantReq) {
				t.Errorf("host saw %+v\nwant %+v", seen, tt.wantReq)
			}
			var body struct{ OK bool }
			if resp.Status != tt.wantStatus || !resp.OK() || resp.URL != tt.wantReq.URL+"?final" ||
				resp.Header.Get("content-type") != "application/json" || resp.DecodeJSON(&body) != nil || !body.OK {
				t.Errorf("response = %+v", resp)
			}
		})
	}
}

func TestHTTPClient_Do_withoutHost(t *testing.T) {
	_, err := HTTP.Get("https://api.example.com/")
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != "NO_HOST" {
		t.Errorf("err = %v, want NO_HOST", err)
	}
	if _, err := HTTP.Do(&Request{}); err == nil {
		t.Error("a request without a URL was sent")
	}
}

func TestResponse_DecodeJSON(t *testing.T) {
	r := &Response{Status: 502, Body: []byte("<html>"), URL: "https://x"}
	var v map[string]any
	err := r.DecodeJSON(&v)
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != CodeUpstreamError || r.OK() {
		t.Errorf("err = %v, OK = %v", err, r.OK())
	}
}

func TestHostHelpers(t *testing.T) {
	host := &TestHost{Settings: map[string]string{"region": "EU", "empty": ""}}
	type got struct {
		Region, Empty string
		HasRegion     bool
		HasEmpty      bool
		HasMissing    bool
	}
	var g got
	tool := Tool("test_helpers", "Helpers.", func(Context, struct{}) (struct{}, error) {
		g.Region, g.HasRegion = Config("region")
		g.Empty, g.HasEmpty = Config("empty")
		_, g.HasMissing = Config("missing")
		LogDebug("d %d", 1)
		LogInfo("i")
		LogWarn("w")
		LogError("e %s", "x")
		Progress(1, 3, "one of three")
		return struct{}{}, nil
	})
	if status, out := host.Call(tool, nil); status != statusOK {
		t.Fatalf("status %d, output %s", status, out)
	}
	if g != (got{Region: "EU", HasRegion: true, HasEmpty: true}) {
		t.Errorf("config = %+v", g)
	}
	wantLogs := []LogRecord{{"debug", "d 1"}, {"info", "i"}, {"warn", "w"}, {"error", "e x"}}
	if !reflect.DeepEqual(host.Logs(), wantLogs) {
		t.Errorf("logs = %+v", host.Logs())
	}
	if p := host.ProgressReports(); !reflect.DeepEqual(p, []ProgressRecord{{1, 3, "one of three"}}) {
		t.Errorf("progress = %+v", p)
	}
}
