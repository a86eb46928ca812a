//go:build !wasip1

package pdk

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestContent_MarshalJSON(t *testing.T) {
	tests := []struct {
		name    string
		content Content
		want    string
	}{
		{"empty", Content{}, `{"$content":[]}`},
		{"text and structured", Content{Blocks: []ContentBlock{Text("hi")}, Structured: map[string]int{"n": 1}},
			`{"$content":[{"type":"text","text":"hi"}],"$structured":{"n":1}}`},
		{"image", Content{Blocks: []ContentBlock{Image([]byte{1, 2}, "image/png")}},
			`{"$content":[{"type":"image","data":"AQI=","mimeType":"image/png"}]}`},
		{"audio", Content{Blocks: []ContentBlock{Audio([]byte{3}, "audio/wav")}},
			`{"$content":[{"type":"audio","data":"Aw==","mimeType":"audio/wav"}]}`},
		{"embedded", Content{Blocks: []ContentBlock{EmbeddedText("a://b", "text/plain", "x"), EmbeddedBlob("a://c", "image/png", []byte{4})}},
			`{"$content":[{"type":"resource","resource":{"uri":"a://b","mimeType":"text/plain","text":"x"}},{"type":"resource","resource":{"uri":"a://c","mimeType":"image/png","blob":"BA=="}}]}`},
		{"link", Content{Blocks: []ContentBlock{ResourceLink("a://b", "b")}}, `{"$content":[{"type":"resource_link","uri":"a://b","name":"b"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.content)
			if err != nil || string(b) != tt.want {
				t.Fatalf("got %s, %v; want %s", b, err, tt.want)
			}
		})
	}
}

// TestTool_contentResult runs a tool returning Content through the host's
// wire format and checks its manifest entry has no output schema.
func TestTool_contentResult(t *testing.T) {
	tool := Tool("demo_pic", "A picture.", func(Context, struct{}) (Content, error) {
		return Content{Blocks: []ContentBlock{Text("see"), Image([]byte("png"), "image/png")}}, nil
	})
	status, out := (&TestHost{}).Call(tool, []byte(`{}`))
	if status != statusOK || string(out) != `{"$content":[{"type":"text","text":"see"},{"type":"image","data":"cG5n","mimeType":"image/png"}]}` {
		t.Fatalf("status %d output %s", status, out)
	}
	tm, err := tool.manifestEntry()
	if err != nil || tm.OutputSchema != nil {
		t.Fatalf("manifest entry %+v, %v; want no output schema", tm, err)
	}
}

func TestInputSchema(t *testing.T) {
	raw := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"a":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/a"}}}`
	tm, err := Tool("demo_x", "X.", func(Context, struct {
		A string `json:"a,omitempty"`
	}) (struct{}, error) {
		return struct{}{}, nil
	}, InputSchema(raw)).manifestEntry()
	if err != nil || string(tm.InputSchema) != raw {
		t.Fatalf("inputSchema %s, %v", tm.InputSchema, err)
	}
	_, err = Tool("demo_x", "X.", func(Context, struct{}) (struct{}, error) { return struct{}{}, nil }, InputSchema(`{"type":"string"}`)).manifestEntry()
	if err == nil || !strings.Contains(err.Error(), `"type": "object"`) {
		t.Fatalf("a non-object schema: %v", err)
	}
}

func TestManifestJSON_resourcesAndPrompts(t *testing.T) {
	ok := Tool("demo_a", "A.", func(Context, struct{}) (struct{}, error) { return struct{}{}, nil })
	plugin := Plugin{Name: "demo", Version: "1.0.0", Description: "d",
		Resources:         []Resource{{URI: "demo://r", Name: "r", MIMEType: "text/plain"}},
		ResourceTemplates: []ResourceTemplate{{URITemplate: "demo://t/{id}", Name: "t", Completions: map[string][]string{"id": {"1"}}}},
		Prompts:           []Prompt{{Name: "demo_p", Arguments: []PromptArgument{{Name: "x", Required: true}}}},
	}
	withRegistration(t, func() {
		Register(plugin, ok)
		b, err := ManifestJSON()
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"resources":[{"uri":"demo://r","name":"r","mimeType":"text/plain"}]`,
			`"resourceTemplates":[{"uriTemplate":"demo://t/{id}","name":"t","completions":{"id":["1"]}}]`,
			`"prompts":[{"name":"demo_p","arguments":[{"name":"x","required":true}]}]`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("manifest %s lacks %s", b, want)
			}
		}
	})
	tests := []struct {
		name   string
		plugin func(p Plugin) Plugin
		msg    string
	}{
		{"resource export is a tool's", func(p Plugin) Plugin { p.Resources[0].Export = "demo_a"; return p }, "resources[0].export \"demo_a\" is also the export of demo_a"},
		{"prompt export reserved", func(p Plugin) Plugin { p.Prompts = []Prompt{{Name: "demo_p", Export: "wb_x"}}; return p }, "prompts[0].export \"wb_x\" is reserved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plugin
			p.Resources = append([]Resource(nil), plugin.Resources...)
			withRegistration(t, func() {
				Register(tt.plugin(p), ok)
				if _, err := ManifestJSON(); err == nil || !strings.Contains(err.Error(), tt.msg) {
					t.Fatalf("err %v, want %q", err, tt.msg)
				}
			})
		})
	}
}

func TestReadResource(t *testing.T) {
	read := func(ptr, size uint32) uint32 {
		return ReadResource(ptr, size, func(r ResourceRequest) ([]ResourceContents, error) {
			switch {
			case r.URI == "demo://r":
				return []ResourceContents{{Text: "hello"}}, nil
			case r.Variables["id"] != "":
				return []ResourceContents{{Blob: []byte{1}, MIMEType: "application/octet-stream"}}, nil
			case r.URI == "demo://panic":
				panic("boom")
			}
			return nil, NotFound("no %s", r.URI)
		})
	}
	tests := []struct {
		name, input string
		status      uint32
		want        string
	}{
		{"fixed", `{"uri":"demo://r"}`, statusOK, `{"contents":[{"text":"hello"}]}`},
		{"template", `{"uri":"demo://t/7","variables":{"id":"7"}}`, statusOK, `{"contents":[{"mimeType":"application/octet-stream","blob":"AQ=="}]}`},
		{"unknown", `{"uri":"demo://x"}`, statusError, `"code":"NOT_FOUND"`},
		{"bad input", `[1]`, statusError, `"code":"INVALID_ARGUMENTS"`},
		{"panic", `{"uri":"demo://panic"}`, statusError, `panic in read_resource: boom`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := (&TestHost{}).CallExport(read, []byte(tt.input))
			if status != tt.status || !strings.Contains(string(out), tt.want) {
				t.Fatalf("status %d output %s; want %d with %s", status, out, tt.status, tt.want)
			}
		})
	}
}

func TestGetPrompt(t *testing.T) {
	get := func(ptr, size uint32) uint32 {
		return GetPrompt(ptr, size, func(r PromptRequest) (PromptResult, error) {
			if r.Name != "demo_p" {
				return PromptResult{}, InvalidArguments("no prompt %s", r.Name)
			}
			return PromptResult{Description: "d", Messages: []PromptMessage{{Role: "user", Content: Text("x=" + r.Arguments["x"])}}}, nil
		})
	}
	status, out := (&TestHost{}).CallExport(get, []byte(`{"name":"demo_p","arguments":{"x":"1"}}`))
	if status != statusOK || string(out) != `{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"x=1"}}]}` {
		t.Fatalf("status %d output %s", status, out)
	}
	status, out = (&TestHost{}).CallExport(get, []byte(`{"name":"other"}`))
	if status != statusError || !strings.Contains(string(out), `"code":"INVALID_ARGUMENTS"`) {
		t.Fatalf("status %d output %s", status, out)
	}
}

func TestElicitAndSample(t *testing.T) {
	var asked json.RawMessage
	host := &TestHost{
		Elicit: func(req json.RawMessage) (json.RawMessage, error) {
			asked = req
			return json.RawMessage(`{"action":"accept","content":{"ok":true}}`), nil
		},
	}
	tool := Tool("demo_ask", "Asks.", func(Context, struct{}) (map[string]string, error) {
		res, err := Elicit("Sure?", map[string]any{"type": "object"})
		if err != nil {
			return nil, err
		}
		_, serr := Sample(map[string]any{"maxTokens": 1})
		var e *Error
		if !errors.As(serr, &e) || e.Code != CodeUnsupported {
			return nil, Errorf(CodeToolError, "sample without a handler: %v", serr)
		}
		return map[string]string{"action": res.Action, "content": string(res.Content)}, nil
	})
	status, out := host.Call(tool, []byte(`{}`))
	if status != statusOK || string(out) != `{"action":"accept","content":"{\"ok\":true}"}` {
		t.Fatalf("status %d output %s", status, out)
	}
	if string(asked) != `{"message":"Sure?","requestedSchema":{"type":"object"}}` {
		t.Fatalf("elicit request %s", asked)
	}
	host.Elicit = func(json.RawMessage) (json.RawMessage, error) { return nil, Errorf("CANCELED", "the user left") }
	status, out = host.Call(tool, []byte(`{}`))
	if status != statusError || !strings.Contains(string(out), `"code":"CANCELED"`) {
		t.Fatalf("status %d output %s", status, out)
	}
}

func TestInput(t *testing.T) {
	var asked json.RawMessage
	host := &TestHost{
		Input: func(req json.RawMessage) (json.RawMessage, error) {
			asked = req
			return json.RawMessage(`{"name":{"action":"accept","content":{"name":"Ada"}},"roots":{"roots":[{"uri":"file:///r"}]}}`), nil
		},
	}
	tool := Tool("demo_input", "Asks twice.", func(Context, struct{}) (map[string]string, error) {
		res, err := Input(map[string]InputRequest{
			"name":  ElicitInput("Name?", map[string]any{"type": "object"}),
			"roots": RootsInput(),
		})
		if err != nil {
			return nil, err
		}
		return map[string]string{"name": string(res["name"]), "roots": string(res["roots"])}, nil
	})
	status, out := host.Call(tool, []byte(`{}`))
	if status != statusOK || !strings.Contains(string(out), `file:///r`) || !strings.Contains(string(out), `Ada`) {
		t.Fatalf("status %d output %s", status, out)
	}
	if string(asked) != `{"name":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object"}}},"roots":{"method":"roots/list"}}` {
		t.Fatalf("input request %s", asked)
	}
	if got := SampleInput(map[string]int{"maxTokens": 1}); got.Method != "sampling/createMessage" {
		t.Fatalf("SampleInput = %+v", got)
	}

	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"two missing", (&Error{Code: CodeUnsupported, Message: "no"}).WithDetails(map[string]any{"requiredCapabilities": map[string]any{"sampling": map[string]any{}, "elicitation": map[string]any{}}}), []string{"elicitation", "sampling"}},
		{"no details", &Error{Code: CodeUnsupported, Message: "no client"}, nil},
		{"another code", (&Error{Code: "CANCELED", Message: "x"}).WithDetails(map[string]any{"requiredCapabilities": map[string]any{"roots": map[string]any{}}}), nil},
		{"not an Error", errors.New("plain"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MissingCapabilities(tt.err); strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("MissingCapabilities = %v, want %v", got, tt.want)
			}
		})
	}
	// Without a handler the input import answers UNSUPPORTED, as the host
	// does for a call without a client.
	status, out = (&TestHost{}).Call(tool, []byte(`{}`))
	if status != statusError || !strings.Contains(string(out), `"code":"UNSUPPORTED"`) {
		t.Fatalf("status %d output %s", status, out)
	}
}
