package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/mcp"
	"github.com/workbench-dev/workbench/server/internal/mcp/mcptest"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/toolcall"
)

// media is an integration with content results, resources, a template and
// prompts, served by functions in place of wasm exports.
func media() *registry.Integration {
	m := mcptest.Manifest("media", manifest.ModeNone,
		mcptest.Tool("media_mixed", "Mixed", "Returns text, an image and a resource.", ""),
		mcptest.Tool("media_typed", "Typed", "Returns content with structured content.", ""),
		mcptest.Tool("media_bad", "Bad", "Returns a malformed content result.", ""),
		mcptest.Tool("media_needs_sampling", "Needs sampling", "Fails as a plugin does without sampling.", ""))
	m.Tools[1].OutputSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	m.Resources = []manifest.Resource{{URI: "media://note", Name: "note", MIMEType: "text/plain"}, {URI: "media://gone", Name: "gone"}}
	m.ResourceTemplates = []manifest.ResourceTemplate{{URITemplate: "media://item/{id}", Name: "item", MIMEType: "application/json",
		Completions: map[string][]string{"id": {"apple", "apricot", "banana"}}}}
	m.Prompts = []manifest.Prompt{{Name: "media_greet", Arguments: []manifest.PromptArgument{
		{Name: "who", Required: true, Completions: []string{"world", "wide"}}}}}
	funcs := mcptest.NewFuncs(map[string]mcptest.ToolFunc{
		"media_mixed": func(context.Context, toolcall.Call) (json.RawMessage, error) {
			return json.RawMessage(`{"$content":[{"type":"text","text":"hi"},{"type":"image","data":"AQI=","mimeType":"image/png"},
				{"type":"audio","data":"Aw==","mimeType":"audio/wav"},{"type":"resource","resource":{"uri":"media://x","text":"t"}}]}`), nil
		},
		"media_typed": func(context.Context, toolcall.Call) (json.RawMessage, error) {
			return json.RawMessage(`{"$content":[{"type":"text","text":"one"}],"$structured":{"n":1}}`), nil
		},
		"media_bad": func(context.Context, toolcall.Call) (json.RawMessage, error) {
			return json.RawMessage(`{"$content":[{"type":"image","mimeType":"image/png"}]}`), nil
		},
		"media_needs_sampling": func(context.Context, toolcall.Call) (json.RawMessage, error) {
			return nil, &failure.Error{Code: "UNSUPPORTED", Message: "sample is not available", Details: json.RawMessage(`{"requiredCapabilities":{"sampling":{}}}`)}
		},
		manifest.DefaultResourceExport: func(_ context.Context, c toolcall.Call) (json.RawMessage, error) {
			var req struct {
				URI       string            `json:"uri"`
				Variables map[string]string `json:"variables"`
			}
			if err := json.Unmarshal(c.Input, &req); err != nil {
				return nil, err
			}
			switch {
			case req.URI == "media://note":
				return json.RawMessage(`{"contents":[{"text":"a note"}]}`), nil
			case req.Variables["id"] != "":
				b, _ := json.Marshal(map[string]any{"contents": []any{map[string]string{"text": "item " + req.Variables["id"]}}})
				return b, nil
			}
			return nil, &failure.Error{Code: "NOT_FOUND", Message: "gone"}
		},
		manifest.DefaultPromptExport: func(_ context.Context, c toolcall.Call) (json.RawMessage, error) {
			var req struct {
				Arguments map[string]string `json:"arguments"`
			}
			if err := json.Unmarshal(c.Input, &req); err != nil {
				return nil, err
			}
			b, _ := json.Marshal(map[string]any{"messages": []any{map[string]any{"role": "user",
				"content": map[string]string{"type": "text", "text": "Hello, " + req.Arguments["who"]}}}})
			return b, nil
		},
	})
	return registry.Native(m, funcs)
}

// TestEndpoint_PluginContent drives content results, plugin resources,
// templates, prompts, completion and subscriptions through the Go SDK
// client in both protocol eras.
func TestEndpoint_PluginContent(t *testing.T) {
	e := start(t, mcp.Options{Surface: mcp.SurfaceDirect, Catalog: mcptest.NewSource(media())})
	ctx := context.Background()
	for _, era := range []string{legacyEra, newEra} {
		t.Run(era, func(t *testing.T) {
			cs := connect(t, e.url, aliceToken, era, nil)

			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "media_mixed", Arguments: map[string]any{}})
			if err != nil || res.IsError || len(res.Content) != 4 || res.StructuredContent != nil {
				t.Fatalf("media_mixed: %+v %v", res, err)
			}
			img, ok := res.Content[1].(*sdk.ImageContent)
			emb, ok2 := res.Content[3].(*sdk.EmbeddedResource)
			if !ok || string(img.Data) != "\x01\x02" || img.MIMEType != "image/png" || !ok2 || emb.Resource.Text != "t" {
				t.Fatalf("media_mixed blocks: %#v %#v", res.Content[1], res.Content[3])
			}
			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "media_typed", Arguments: map[string]any{}})
			if err != nil || res.IsError || len(res.Content) != 1 || !strings.Contains(string(mustJSON(t, res.StructuredContent)), `"n":1`) {
				t.Fatalf("media_typed: %+v %v", res, err)
			}
			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "media_bad", Arguments: map[string]any{}})
			if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "BAD_OUTPUT") {
				t.Fatalf("media_bad: %+v %v", res, err)
			}
			_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "media_needs_sampling", Arguments: map[string]any{}})
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != sdk.CodeMissingRequiredClientCapabilities || !strings.Contains(string(rpc.Data), `"sampling"`) {
				t.Fatalf("media_needs_sampling: %v", err)
			}

			read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "media://note"})
			if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "a note" || read.Contents[0].URI != "media://note" || read.Contents[0].MIMEType != "text/plain" {
				t.Fatalf("read note: %+v %v", read, err)
			}
			read, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "media://item/a%20b"})
			if err != nil || read.Contents[0].Text != "item a b" || read.Contents[0].MIMEType != "application/json" {
				t.Fatalf("read item: %+v %v", read, err)
			}
			for _, uri := range []string{"media://gone", "media://item/a/b", "media://other"} {
				if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri}); err == nil {
					t.Errorf("read %s: want resource not found", uri)
				}
			}

			prompt, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "media_greet", Arguments: map[string]string{"who": "you"}})
			if err != nil || len(prompt.Messages) != 1 || prompt.Messages[0].Content.(*sdk.TextContent).Text != "Hello, you" {
				t.Fatalf("prompt: %+v %v", prompt, err)
			}
			for name, args := range map[string]map[string]string{"media_greet": {}, "media_nope": nil} {
				if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args}); !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
					t.Errorf("prompt %s %v: %v, want invalid params", name, args, err)
				}
			}

			for _, tt := range []struct {
				ref  *sdk.CompleteReference
				arg  sdk.CompleteParamsArgument
				want string
			}{
				{&sdk.CompleteReference{Type: "ref/prompt", Name: "media_greet"}, sdk.CompleteParamsArgument{Name: "who", Value: "wi"}, "wide"},
				{&sdk.CompleteReference{Type: "ref/resource", URI: "media://item/{id}"}, sdk.CompleteParamsArgument{Name: "id", Value: "ap"}, "apple,apricot"},
				{&sdk.CompleteReference{Type: "ref/resource", URI: "media://item/{id}"}, sdk.CompleteParamsArgument{Name: "id", Value: "z"}, ""},
			} {
				c, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: tt.ref, Argument: tt.arg})
				if err != nil || strings.Join(c.Completion.Values, ",") != tt.want {
					t.Errorf("complete %+v: %+v %v, want %q", tt.arg, c, err, tt.want)
				}
			}

			if era == legacyEra {
				if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "media://item/7"}); err != nil {
					t.Errorf("subscribe: %v", err)
				}
				if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "media://other"}); err == nil {
					t.Error("subscribe to an unknown resource succeeded")
				}
				if err := cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: "media://item/7"}); err != nil {
					t.Errorf("unsubscribe: %v", err)
				}
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
