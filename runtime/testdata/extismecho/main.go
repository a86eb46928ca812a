// Command extismecho is a test plugin written against the Extism Go PDK: it
// exports the Workbench manifest, an echo tool and a tool that calls the
// host's credential-injecting workbench_http_request.
package main

import (
	"encoding/json"

	"github.com/extism/go-pdk"
)

const manifestJSON = `{
  "abi": 1,
  "name": "extismecho",
  "version": "0.1.0",
  "description": "Echo and HTTP tools written with the Extism Go PDK.",
  "hosts": ["api.example.com"],
  "auth": {"mode": "apikey", "apikey": {"fields": [{"name": "api_key", "label": "API key", "secret": true, "required": true}], "placement": {"in": "header", "name": "X-Api-Key", "value": "{api_key}"}}},
  "tools": [
    {"slug": "extismecho_echo", "description": "Returns its input.", "inputSchema": {"type": "object"}, "export": "echo"},
    {"slug": "extismecho_fail", "description": "Always fails with NOT_FOUND.", "inputSchema": {"type": "object"}, "export": "fail"},
    {"slug": "extismecho_http", "description": "Fetches a URL through the host.", "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}}, "export": "http"},
    {"slug": "extismecho_native_http", "description": "Fetches a URL with Extism's own http_request.", "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}}, "export": "native_http"}
  ]
}`

//go:wasmimport extism:host/user workbench_http_request
func workbenchHTTPRequest(offset uint64) uint64

//go:wasmexport manifest
func manifest() int32 {
	pdk.OutputString(manifestJSON)
	return 0
}

//go:wasmexport echo
func echo() int32 {
	pdk.Output(pdk.Input())
	return 0
}

//go:wasmexport fail
func fail() int32 {
	pdk.SetErrorString(`{"code":"NOT_FOUND","message":"nothing here"}`)
	return 1
}

type httpInput struct {
	URL string `json:"url"`
}

type httpRequest struct {
	Method  string              `json:"method"`
	URL     string              `json:"url"`
	Headers map[string][]string `json:"headers"`
	Body    []byte              `json:"body,omitempty"`
}

type httpResponse struct {
	Status  int                 `json:"status"`
	Headers map[string][]string `json:"headers"`
	Body    []byte              `json:"body"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

//go:wasmexport http
func http() int32 {
	var in httpInput
	if err := json.Unmarshal(pdk.Input(), &in); err != nil {
		pdk.SetError(err)
		return 1
	}
	req, _ := json.Marshal(httpRequest{Method: "POST", URL: in.URL, Headers: map[string][]string{"X-Api-Key": {"forged"}}, Body: []byte("ping")})
	mem := pdk.AllocateBytes(req)
	defer mem.Free()
	out := pdk.FindMemory(workbenchHTTPRequest(mem.Offset()))
	raw := out.ReadBytes()
	out.Free()
	var resp httpResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		pdk.SetError(err)
		return 1
	}
	if resp.Error != nil {
		b, _ := json.Marshal(resp.Error)
		pdk.SetErrorString(string(b))
		return 1
	}
	b, _ := json.Marshal(map[string]any{"status": resp.Status, "body": string(resp.Body)})
	pdk.Output(b)
	return 0
}

// nativeHTTP uses Extism's own http_request, which the host refuses.
//
//go:wasmexport native_http
func nativeHTTP() int32 {
	var in httpInput
	if err := json.Unmarshal(pdk.Input(), &in); err != nil {
		pdk.SetError(err)
		return 1
	}
	resp := pdk.NewHTTPRequest(pdk.MethodGet, in.URL).Send()
	pdk.OutputString(string(resp.Body()))
	return 0
}

func main() {}
