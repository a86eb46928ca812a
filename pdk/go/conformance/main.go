// Command conf-go is the Go PDK's ABI conformance plugin (integration
// conf-go): the same six tools every language kit's conformance plugin
// ships, with the same behaviour, so one test (plugins-wasm/abitest) can
// check that each host import and error path behaves alike in every
// language. Build it as a WASI preview 1 reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o conf-go.wasm .
package main

import (
	pdk "github.com/workbench-dev/workbench/pdk/go"
)

// EchoInput is any object: the Go kit's typed input is a map, whose
// schema ({"type":"object","additionalProperties":{}}) admits every key.
type EchoInput map[string]any

// Empty is the input and the result of the tools that take and return {}.
type Empty struct{}

// ConfigInput names the setting conf_go_config reads.
type ConfigInput struct {
	Key string `json:"key" jsonschema:"The setting's name."`
}

// ConfigOutput is the setting's value, or null when config_get has none.
type ConfigOutput struct {
	Value *string `json:"value"`
}

// HTTPInput is the URL conf_go_http fetches.
type HTTPInput struct {
	URL string `json:"url" jsonschema:"An absolute URL."`
}

// HTTPOutput is the upstream's status and its body as text.
type HTTPOutput struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
}

var (
	echoTool = pdk.Tool("conf_go_echo", "Returns its input object unchanged.",
		func(_ pdk.Context, in EchoInput) (EchoInput, error) {
			if in == nil {
				return EchoInput{}, nil
			}
			return in, nil
		}, pdk.ReadOnly(), pdk.Idempotent())

	failTool = pdk.Tool("conf_go_fail", `Always fails with NOT_FOUND "nothing here" and details {"id":7}.`,
		func(_ pdk.Context, _ Empty) (Empty, error) {
			return Empty{}, pdk.NotFound("nothing here").WithDetails(map[string]int{"id": 7})
		}, pdk.ReadOnly(), pdk.Idempotent())

	configTool = pdk.Tool("conf_go_config", "Returns the value of a setting read with config_get, or null.",
		func(_ pdk.Context, in ConfigInput) (ConfigOutput, error) {
			v, ok := pdk.Config(in.Key)
			if !ok {
				return ConfigOutput{}, nil
			}
			return ConfigOutput{Value: &v}, nil
		}, pdk.ReadOnly(), pdk.Idempotent())

	httpTool = pdk.Tool("conf_go_http", "GETs a URL and returns its status and body text; host errors are passed on.",
		func(_ pdk.Context, in HTTPInput) (HTTPOutput, error) {
			resp, err := pdk.HTTP.Get(in.URL)
			if err != nil {
				return HTTPOutput{}, err // a *pdk.Error keeps the host's code
			}
			return HTTPOutput{Status: resp.Status, Body: string(resp.Body)}, nil
		}, pdk.ReadOnly(), pdk.OpenWorld())

	logTool = pdk.Tool("conf_go_log", `Logs "hello from go" at info level and returns {}.`,
		func(_ pdk.Context, _ Empty) (Empty, error) {
			pdk.LogInfo("hello from go")
			return Empty{}, nil
		}, pdk.ReadOnly(), pdk.Idempotent())

	progressTool = pdk.Tool("conf_go_progress", `Reports progress 1/2 "half", then 2/2 "done", and returns {}.`,
		func(_ pdk.Context, _ Empty) (Empty, error) {
			pdk.Progress(1, 2, "half")
			pdk.Progress(2, 2, "done")
			return Empty{}, nil
		}, pdk.ReadOnly(), pdk.Idempotent())
)

func init() {
	pdk.Register(pdk.Plugin{
		Name:        "conf-go",
		Version:     "1.0.0",
		Title:       "Go conformance",
		Description: "ABI conformance plugin of the Go plugin kit.",
		Auth:        pdk.NoAuth(),
	}, echoTool, failTool, configTool, httpTool, logTool, progressTool)
}

//go:wasmexport conf_go_echo
func confGoEcho(ptr, size uint32) uint32 { return echoTool.Run(ptr, size) }

//go:wasmexport conf_go_fail
func confGoFail(ptr, size uint32) uint32 { return failTool.Run(ptr, size) }

//go:wasmexport conf_go_config
func confGoConfig(ptr, size uint32) uint32 { return configTool.Run(ptr, size) }

//go:wasmexport conf_go_http
func confGoHTTP(ptr, size uint32) uint32 { return httpTool.Run(ptr, size) }

//go:wasmexport conf_go_log
func confGoLog(ptr, size uint32) uint32 { return logTool.Run(ptr, size) }

//go:wasmexport conf_go_progress
func confGoProgress(ptr, size uint32) uint32 { return progressTool.Run(ptr, size) }

func main() {}
