//go:build !wasip1

package pdk_test

import (
	"fmt"
	"strings"

	pdk "github.com/workbench-dev/workbench/pdk/go"
)

type GreetInput struct {
	Name  string `json:"name" jsonschema:"who to greet"`
	Times int    `json:"times,omitempty" jsonschema:"how many times" minimum:"1" maximum:"3" default:"1"`
}

type Greeting struct {
	Text string `json:"text"`
}

var greet = pdk.Tool("demo_greet", "Greets someone.", func(_ pdk.Context, in GreetInput) (Greeting, error) {
	return Greeting{Text: strings.TrimSpace(strings.Repeat("hello "+in.Name+"!", in.Times))}, nil
}, pdk.ReadOnly(), pdk.Idempotent())

// A TestHost runs a tool natively the way the Workbench host runs it in wasm:
// the status and output are what the host would receive.
func ExampleTool() {
	host := &pdk.TestHost{}
	for _, input := range []string{`{"name":"Ada"}`, `{"name":"Ada","times":5}`, `{"nmae":"Ada"}`} {
		status, out := host.Call(greet, []byte(input))
		fmt.Println(status, string(out))
	}
	// Output:
	// 0 {"text":"hello Ada!"}
	// 1 {"code":"INVALID_ARGUMENTS","message":"field \"times\": must be at most 3, got 5","details":{"field":"times"}}
	// 1 {"code":"INVALID_ARGUMENTS","message":"missing required field \"name\"","details":{"field":"name"}}
}

var status = pdk.Tool("demo_status", "Reports the API status.", func(_ pdk.Context, _ struct{}) (map[string]any, error) {
	resp, err := pdk.HTTP.Get(pdk.BaseURL() + "/status")
	if err != nil {
		return nil, err // a *pdk.Error from the host keeps its code
	}
	if !resp.OK() {
		return nil, pdk.UpstreamError("status %d", resp.Status)
	}
	var out map[string]any
	return out, resp.DecodeJSON(&out)
})

// Handlers reach the network only through the host, which a TestHost
// stands in for.
func ExampleHTTPClient() {
	host := &pdk.TestHost{
		Settings: map[string]string{"base_url": "https://api.example.com"},
		HTTP: func(req *pdk.Request) (*pdk.Response, error) {
			if req.URL != "https://api.example.com/status" {
				return nil, &pdk.Error{Code: "EGRESS_DENIED", Message: req.URL + " is not allowed"}
			}
			return &pdk.Response{Status: 200, Body: []byte(`{"ok":true}`), URL: req.URL}, nil
		},
	}
	code, out := host.Call(status, nil)
	fmt.Println(code, string(out))
	host.Settings["base_url"] = "https://elsewhere.example.com"
	code, out = host.Call(status, nil)
	fmt.Println(code, string(out))
	// Output:
	// 0 {"ok":true}
	// 1 {"code":"EGRESS_DENIED","message":"https://elsewhere.example.com/status is not allowed"}
}
