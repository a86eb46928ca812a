package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	pdk "github.com/workbench-dev/workbench/pdk/go"
)

// redPixel is a 1x1 red PNG.
var redPixel = mustBase64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")

// silence is a WAV file holding one 8-bit mono sample at 8 kHz.
var silence = mustBase64("UklGRiUAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQEAAACA")

func mustBase64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// none is the input of the tools without arguments.
type none struct{}

// The step delay of the logging and progress tools: the suite wants the
// notifications spread over the call.
const step = 50 * time.Millisecond

var (
	simpleText = pdk.Tool("test_simple_text", "Returns one text block.",
		func(pdk.Context, none) (pdk.Content, error) {
			return pdk.Content{Blocks: []pdk.ContentBlock{pdk.Text("This is a simple text response for testing.")}}, nil
		}, pdk.ReadOnly())
	imageContent = pdk.Tool("test_image_content", "Returns a 1x1 red PNG as an image block.",
		func(pdk.Context, none) (pdk.Content, error) {
			return pdk.Content{Blocks: []pdk.ContentBlock{pdk.Image(redPixel, "image/png")}}, nil
		}, pdk.ReadOnly())
	audioContent = pdk.Tool("test_audio_content", "Returns a tiny WAV file as an audio block.",
		func(pdk.Context, none) (pdk.Content, error) {
			return pdk.Content{Blocks: []pdk.ContentBlock{pdk.Audio(silence, "audio/wav")}}, nil
		}, pdk.ReadOnly())
	embeddedResource = pdk.Tool("test_embedded_resource", "Returns an embedded text resource.",
		func(pdk.Context, none) (pdk.Content, error) {
			return pdk.Content{Blocks: []pdk.ContentBlock{
				pdk.EmbeddedText("test://embedded-resource", "text/plain", "This is an embedded resource content."),
			}}, nil
		}, pdk.ReadOnly())
	multipleContent = pdk.Tool("test_multiple_content_types", "Returns a text, an image and an embedded JSON resource.",
		func(pdk.Context, none) (pdk.Content, error) {
			return pdk.Content{Blocks: []pdk.ContentBlock{
				pdk.Text("Multiple content types test:"),
				pdk.Image(redPixel, "image/png"),
				pdk.EmbeddedText("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`),
			}}, nil
		}, pdk.ReadOnly())
	withLogging = pdk.Tool("test_tool_with_logging", "Logs three info records 50 ms apart.",
		func(pdk.Context, none) (pdk.Content, error) {
			pdk.LogInfo("Tool execution started")
			time.Sleep(step)
			pdk.LogInfo("Tool processing data")
			time.Sleep(step)
			pdk.LogInfo("Tool execution completed")
			return pdk.Content{Blocks: []pdk.ContentBlock{pdk.Text("Tool with logging executed successfully")}}, nil
		}, pdk.ReadOnly())
	withProgress = pdk.Tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100, 50 ms apart.",
		func(pdk.Context, none) (pdk.Content, error) {
			for i, done := range []float64{0, 50, 100} {
				if i > 0 {
					time.Sleep(step)
				}
				pdk.Progress(done, 100, fmt.Sprintf("step %d of 3", i+1))
			}
			return pdk.Content{Blocks: []pdk.ContentBlock{pdk.Text("Tool with progress executed successfully")}}, nil
		}, pdk.ReadOnly())
	errorHandling = pdk.Tool("test_error_handling", "Always fails.",
		func(pdk.Context, none) (pdk.Content, error) {
			return pdk.Content{}, pdk.Errorf(pdk.CodeToolError, "This tool intentionally returns an error for testing")
		}, pdk.ReadOnly())
)

// samplingInput is test_sampling's input.
type samplingInput struct {
	Prompt string `json:"prompt" jsonschema:"The prompt to send to the client's model"`
}

var sampling = pdk.Tool("test_sampling", "Asks the client's model to answer the prompt.",
	func(_ pdk.Context, in samplingInput) (pdk.Content, error) {
		res, err := pdk.Sample(map[string]any{
			"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": in.Prompt}}},
			"maxTokens": 100,
		})
		if err != nil {
			return pdk.Content{}, err
		}
		var answer struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(res, &answer); err != nil {
			return pdk.Content{}, pdk.Errorf(pdk.CodeToolError, "sampling result: %v", err)
		}
		return pdk.Content{Blocks: []pdk.ContentBlock{pdk.Text("LLM response: " + answer.Content.Text)}}, nil
	}, pdk.TimeoutMs(60000))

// elicitationInput is test_elicitation's input.
type elicitationInput struct {
	Message string `json:"message" jsonschema:"The message to show the user"`
}

// elicited asks the user and reports the answer as text.
func elicited(prefix, message string, schema any) (pdk.Content, error) {
	res, err := pdk.Elicit(message, schema)
	if err != nil {
		return pdk.Content{}, err
	}
	content := string(res.Content)
	if content == "" {
		content = "{}"
	}
	return pdk.Content{Blocks: []pdk.ContentBlock{pdk.Text(fmt.Sprintf("%s: action=%s, content=%s", prefix, res.Action, content))}}, nil
}

var (
	elicitation = pdk.Tool("test_elicitation", "Asks the user for a user name and an email address.",
		func(_ pdk.Context, in elicitationInput) (pdk.Content, error) {
			return elicited("User response", in.Message, json.RawMessage(`{"type":"object","properties":{
				"username":{"type":"string","description":"User's response"},
				"email":{"type":"string","description":"User's email address"}},
				"required":["username","email"]}`))
		}, pdk.TimeoutMs(60000))
	elicitationDefaults = pdk.Tool("test_elicitation_sep1034_defaults", "Asks the user with a default for every primitive type (SEP-1034).",
		func(pdk.Context, none) (pdk.Content, error) {
			return elicited("Elicitation completed", "Please review and update the form fields with defaults", json.RawMessage(`{"type":"object","properties":{
				"name":{"type":"string","description":"User name","default":"John Doe"},
				"age":{"type":"integer","description":"User age","default":30},
				"score":{"type":"number","description":"User score","default":95.5},
				"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
				"verified":{"type":"boolean","description":"Verification status","default":true}},
				"required":[]}`))
		}, pdk.TimeoutMs(60000))
	elicitationEnums = pdk.Tool("test_elicitation_sep1330_enums", "Asks the user with the five enum forms of SEP-1330.",
		func(pdk.Context, none) (pdk.Content, error) {
			return elicited("Elicitation completed", "Please pick from the enum fields", json.RawMessage(`{"type":"object","properties":{
				"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
				"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
				"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
				"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},
				"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}},
				"required":[]}`))
		}, pdk.TimeoutMs(60000))
)

// headerInput is test_header_echo's input: region travels in the
// Mcp-Param-Region header too (SEP-2243), which the server checks against
// the body.
type headerInput struct {
	Region string `json:"region"`
}

var (
	headerEcho = pdk.Tool("test_header_echo", "Echoes its region argument, which clients also send as the Mcp-Param-Region header.",
		func(_ pdk.Context, in headerInput) (pdk.Content, error) {
			return pdk.Content{Blocks: []pdk.ContentBlock{pdk.Text("region: " + in.Region)}}, nil
		}, pdk.ReadOnly(), pdk.InputSchema(`{"type":"object","properties":{
			"region":{"type":"string","description":"A region name","x-mcp-header":"Region"}},
			"required":["region"],"additionalProperties":false}`))
	// The diagnostic tools of the 2026-07-28 server-stateless scenario.
	missingCapability = pdk.Tool("test_missing_capability", "Needs the client's sampling capability.",
		func(pdk.Context, none) (pdk.Content, error) {
			res, err := pdk.Sample(map[string]any{
				"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "ping"}}},
				"maxTokens": 10,
			})
			if err != nil {
				return pdk.Content{}, err
			}
			return pdk.Content{Blocks: []pdk.ContentBlock{pdk.Text("sampled: " + string(res))}}, nil
		}, pdk.TimeoutMs(60000))
	streamingElicitation = pdk.Tool("test_streaming_elicitation", "Asks the user for a name.",
		func(pdk.Context, none) (pdk.Content, error) {
			return elicited("Elicitation completed", "What is your name?",
				json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`))
		}, pdk.TimeoutMs(60000))
	loggingTool = pdk.Tool("test_logging_tool", "Logs one record at each level.",
		func(pdk.Context, none) (pdk.Content, error) {
			pdk.LogDebug("debug record")
			pdk.LogInfo("info record")
			pdk.LogWarn("warning record")
			pdk.LogError("error record")
			return pdk.Content{Blocks: []pdk.ContentBlock{pdk.Text("logged four records")}}, nil
		}, pdk.ReadOnly())
)

// The resources the suite reads.
var resources = []pdk.Resource{
	{URI: "test://static-text", Name: "static-text", Description: "A fixed text resource.", MIMEType: "text/plain"},
	{URI: "test://static-binary", Name: "static-binary", Description: "A fixed PNG image.", MIMEType: "image/png"},
	{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource to subscribe to.", MIMEType: "text/plain"},
}

var templates = []pdk.ResourceTemplate{{
	URITemplate: "test://template/{id}/data", Name: "template-data", Description: "JSON data for one id.",
	MIMEType: "application/json", Completions: map[string][]string{"id": {"123", "456"}},
}}

// readResource serves the resources and the template.
func readResource(req pdk.ResourceRequest) ([]pdk.ResourceContents, error) {
	switch req.URI {
	case "test://static-text":
		return []pdk.ResourceContents{{Text: "This is the content of the static text resource."}}, nil
	case "test://static-binary":
		return []pdk.ResourceContents{{Blob: redPixel}}, nil
	case "test://watched-resource":
		return []pdk.ResourceContents{{Text: "Watched resource content."}}, nil
	}
	if id, ok := req.Variables["id"]; ok {
		b, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
		if err != nil {
			return nil, err
		}
		return []pdk.ResourceContents{{Text: string(b)}}, nil
	}
	return nil, pdk.NotFound("no resource %s", req.URI)
}

var prompts = []pdk.Prompt{
	{Name: "test_simple_prompt", Description: "A prompt without arguments."},
	{Name: "test_prompt_with_arguments", Description: "A prompt with two arguments.", Arguments: []pdk.PromptArgument{
		{Name: "arg1", Description: "First argument", Required: true, Completions: []string{"paris", "park", "party", "test"}},
		{Name: "arg2", Description: "Second argument", Required: true},
	}},
	{Name: "test_prompt_with_embedded_resource", Description: "A prompt embedding a resource.", Arguments: []pdk.PromptArgument{
		{Name: "resourceUri", Description: "URI of the resource to embed", Required: true},
	}},
	{Name: "test_prompt_with_image", Description: "A prompt with an image."},
	{Name: "test_input_required_result_prompt", Description: "A prompt that asks the user for its context first."},
}

// getPrompt renders the prompts.
func getPrompt(req pdk.PromptRequest) (pdk.PromptResult, error) {
	user := func(c pdk.ContentBlock) pdk.PromptMessage { return pdk.PromptMessage{Role: "user", Content: c} }
	switch req.Name {
	case "test_simple_prompt":
		return pdk.PromptResult{Messages: []pdk.PromptMessage{user(pdk.Text("This is a simple prompt for testing."))}}, nil
	case "test_prompt_with_arguments":
		text := fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", req.Arguments["arg1"], req.Arguments["arg2"])
		return pdk.PromptResult{Messages: []pdk.PromptMessage{user(pdk.Text(text))}}, nil
	case "test_prompt_with_embedded_resource":
		uri := req.Arguments["resourceUri"]
		return pdk.PromptResult{Messages: []pdk.PromptMessage{
			user(pdk.EmbeddedText(uri, "text/plain", "Embedded resource content for testing.")),
			user(pdk.Text("Please process the embedded resource above.")),
		}}, nil
	case "test_input_required_result_prompt":
		return inputRequiredPrompt()
	case "test_prompt_with_image":
		return pdk.PromptResult{Messages: []pdk.PromptMessage{
			user(pdk.Image(redPixel, "image/png")),
			user(pdk.Text("Please analyze the image above.")),
		}}, nil
	}
	return pdk.PromptResult{}, pdk.NotFound("no prompt %s", req.Name)
}

func init() {
	pdk.Register(pdk.Plugin{
		Name: "test", Version: "1.0.0", Title: "MCP conformance fixtures",
		Description:       "The tools, resources and prompts the MCP conformance suite expects. For tests only.",
		Categories:        []string{"testing"},
		Resources:         resources,
		ResourceTemplates: templates,
		Prompts:           prompts,
	}, simpleText, imageContent, audioContent, embeddedResource, multipleContent, withLogging, withProgress,
		errorHandling, sampling, elicitation, elicitationDefaults, elicitationEnums,
		headerEcho, missingCapability, streamingElicitation, loggingTool,
		irElicitation, irSampling, irListRoots, irRequestState, irTamperedState, irMultipleInputs, irMultiRound, irCapabilities)
}

//go:wasmexport test_simple_text
func testSimpleText(ptr, size uint32) uint32 { return simpleText.Run(ptr, size) }

//go:wasmexport test_image_content
func testImageContent(ptr, size uint32) uint32 { return imageContent.Run(ptr, size) }

//go:wasmexport test_audio_content
func testAudioContent(ptr, size uint32) uint32 { return audioContent.Run(ptr, size) }

//go:wasmexport test_embedded_resource
func testEmbeddedResource(ptr, size uint32) uint32 { return embeddedResource.Run(ptr, size) }

//go:wasmexport test_multiple_content_types
func testMultipleContentTypes(ptr, size uint32) uint32 { return multipleContent.Run(ptr, size) }

//go:wasmexport test_tool_with_logging
func testToolWithLogging(ptr, size uint32) uint32 { return withLogging.Run(ptr, size) }

//go:wasmexport test_tool_with_progress
func testToolWithProgress(ptr, size uint32) uint32 { return withProgress.Run(ptr, size) }

//go:wasmexport test_error_handling
func testErrorHandling(ptr, size uint32) uint32 { return errorHandling.Run(ptr, size) }

//go:wasmexport test_sampling
func testSampling(ptr, size uint32) uint32 { return sampling.Run(ptr, size) }

//go:wasmexport test_elicitation
func testElicitation(ptr, size uint32) uint32 { return elicitation.Run(ptr, size) }

//go:wasmexport test_elicitation_sep1034_defaults
func testElicitationDefaults(ptr, size uint32) uint32 { return elicitationDefaults.Run(ptr, size) }

//go:wasmexport test_elicitation_sep1330_enums
func testElicitationEnums(ptr, size uint32) uint32 { return elicitationEnums.Run(ptr, size) }

//go:wasmexport test_header_echo
func testHeaderEcho(ptr, size uint32) uint32 { return headerEcho.Run(ptr, size) }

//go:wasmexport test_missing_capability
func testMissingCapability(ptr, size uint32) uint32 { return missingCapability.Run(ptr, size) }

//go:wasmexport test_streaming_elicitation
func testStreamingElicitation(ptr, size uint32) uint32 { return streamingElicitation.Run(ptr, size) }

//go:wasmexport test_logging_tool
func testLoggingTool(ptr, size uint32) uint32 { return loggingTool.Run(ptr, size) }

//go:wasmexport read_resource
func readResourceExport(ptr, size uint32) uint32 { return pdk.ReadResource(ptr, size, readResource) }

//go:wasmexport get_prompt
func getPromptExport(ptr, size uint32) uint32 { return pdk.GetPrompt(ptr, size, getPrompt) }

// main is never called: the module is a reactor (-buildmode=c-shared).
func main() {}
