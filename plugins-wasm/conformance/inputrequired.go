package main

import (
	"encoding/json"
	"fmt"
	"strings"

	pdk "github.com/workbench-dev/workbench/pdk/go"
)

// The tools and the prompt of the 2026-07-28 input-required scenarios
// (SEP-2322). Each asks through pdk.Input with the keys the suite expects;
// on a 2026-07-28 request the host turns an unanswered question into an
// input-required result and runs the tool again once the client answers.

// nameSchema asks for a name.
var nameSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)

// confirmSchema asks for a confirmation.
var confirmSchema = json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)

// ask asks one question and returns the answer.
func ask(key string, req pdk.InputRequest) (json.RawMessage, error) {
	res, err := pdk.Input(map[string]pdk.InputRequest{key: req})
	if err != nil {
		return nil, err
	}
	return res[key], nil
}

// elicitedValue returns the accepted value of field in an elicitation
// answer, or the action when the user did not accept.
func elicitedValue(answer json.RawMessage, field string) (string, error) {
	var r pdk.ElicitResult
	if err := json.Unmarshal(answer, &r); err != nil {
		return "", pdk.Errorf(pdk.CodeToolError, "elicitation result: %v", err)
	}
	if r.Action != "accept" {
		return "(" + r.Action + ")", nil
	}
	var content map[string]any
	if err := json.Unmarshal(r.Content, &content); err != nil {
		return "", pdk.Errorf(pdk.CodeToolError, "elicitation content: %v", err)
	}
	return fmt.Sprint(content[field]), nil
}

// sampledText is the text of a sampling result.
func sampledText(answer json.RawMessage) string {
	var r struct {
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(answer, &r)
	var one struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(r.Content, &one) == nil && one.Text != "" {
		return one.Text
	}
	var many []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(r.Content, &many)
	var texts []string
	for _, m := range many {
		texts = append(texts, m.Text)
	}
	return strings.Join(texts, " ")
}

// rootURIs lists the URIs of a roots/list result.
func rootURIs(answer json.RawMessage) string {
	var r struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	_ = json.Unmarshal(answer, &r)
	uris := make([]string, 0, len(r.Roots))
	for _, root := range r.Roots {
		uris = append(uris, root.URI)
	}
	return strings.Join(uris, ", ")
}

func question(text string, maxTokens int) pdk.InputRequest {
	return pdk.SampleInput(map[string]any{
		"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": text}}},
		"maxTokens": maxTokens,
	})
}

func text(s string) pdk.Content { return pdk.Content{Blocks: []pdk.ContentBlock{pdk.Text(s)}} }

var (
	irElicitation = pdk.Tool("test_input_required_result_elicitation", "Asks the user's name, then greets them.",
		func(pdk.Context, none) (pdk.Content, error) {
			answer, err := ask("user_name", pdk.ElicitInput("What is your name?", nameSchema))
			if err != nil {
				return pdk.Content{}, err
			}
			name, err := elicitedValue(answer, "name")
			if err != nil {
				return pdk.Content{}, err
			}
			return text("Hello, " + name + "!"), nil
		}, pdk.TimeoutMs(60000))
	irSampling = pdk.Tool("test_input_required_result_sampling", "Asks the client's model for the capital of France.",
		func(pdk.Context, none) (pdk.Content, error) {
			answer, err := ask("capital_question", question("What is the capital of France?", 100))
			if err != nil {
				return pdk.Content{}, err
			}
			return text("The model answered: " + sampledText(answer)), nil
		}, pdk.TimeoutMs(60000))
	irListRoots = pdk.Tool("test_input_required_result_list_roots", "Lists the client's roots.",
		func(pdk.Context, none) (pdk.Content, error) {
			answer, err := ask("client_roots", pdk.RootsInput())
			if err != nil {
				return pdk.Content{}, err
			}
			return text("Client roots: " + rootURIs(answer)), nil
		}, pdk.TimeoutMs(60000))
	irRequestState = confirmTool("test_input_required_result_request_state",
		"Asks for a confirmation carried across rounds in the signed request state.", "state-ok: confirmed=")
	irTamperedState = confirmTool("test_input_required_result_tampered_state",
		"Asks for a confirmation; the host refuses a request state that was tampered with.", "confirmed=")
	irMultipleInputs = pdk.Tool("test_input_required_result_multiple_inputs", "Asks a name, a greeting and the roots at once.",
		func(pdk.Context, none) (pdk.Content, error) {
			res, err := pdk.Input(map[string]pdk.InputRequest{
				"user_name":    pdk.ElicitInput("What is your name?", nameSchema),
				"greeting":     question("Generate a greeting", 50),
				"client_roots": pdk.RootsInput(),
			})
			if err != nil {
				return pdk.Content{}, err
			}
			name, err := elicitedValue(res["user_name"], "name")
			if err != nil {
				return pdk.Content{}, err
			}
			return text(fmt.Sprintf("%s, %s (roots: %s)", sampledText(res["greeting"]), name, rootURIs(res["client_roots"]))), nil
		}, pdk.TimeoutMs(60000))
	irMultiRound = pdk.Tool("test_input_required_result_multi_round", "Asks a name, then a favourite color.",
		func(pdk.Context, none) (pdk.Content, error) {
			first, err := ask("step1", pdk.ElicitInput("Step 1: What is your name?", nameSchema))
			if err != nil {
				return pdk.Content{}, err
			}
			name, err := elicitedValue(first, "name")
			if err != nil {
				return pdk.Content{}, err
			}
			second, err := ask("step2", pdk.ElicitInput("Step 2: What is your favorite color?",
				json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`)))
			if err != nil {
				return pdk.Content{}, err
			}
			color, err := elicitedValue(second, "color")
			if err != nil {
				return pdk.Content{}, err
			}
			return text(fmt.Sprintf("%s likes %s", name, color)), nil
		}, pdk.TimeoutMs(60000))
	irCapabilities = pdk.Tool("test_input_required_result_capabilities", "Asks the user and the model, leaving out what the client cannot answer.",
		func(pdk.Context, none) (pdk.Content, error) {
			reqs := map[string]pdk.InputRequest{
				"user_name": pdk.ElicitInput("What is your name?", nameSchema),
				"greeting":  question("Generate a greeting", 50),
			}
			res, err := pdk.Input(reqs)
			if missing := pdk.MissingCapabilities(err); missing != nil {
				for _, c := range missing {
					switch c {
					case "elicitation":
						delete(reqs, "user_name")
					case "sampling":
						delete(reqs, "greeting")
					}
				}
				if len(reqs) == 0 {
					return pdk.Content{}, err
				}
				res, err = pdk.Input(reqs)
			}
			if err != nil {
				return pdk.Content{}, err
			}
			var parts []string
			if a, ok := res["user_name"]; ok {
				name, err := elicitedValue(a, "name")
				if err != nil {
					return pdk.Content{}, err
				}
				parts = append(parts, "name: "+name)
			}
			if a, ok := res["greeting"]; ok {
				parts = append(parts, "greeting: "+sampledText(a))
			}
			return text(strings.Join(parts, "; ")), nil
		}, pdk.TimeoutMs(60000))
)

// inputRequiredPrompt asks the user for the prompt's context.
func inputRequiredPrompt() (pdk.PromptResult, error) {
	answer, err := ask("user_context", pdk.ElicitInput("What context should the prompt use?",
		json.RawMessage(`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`)))
	if err != nil {
		return pdk.PromptResult{}, err
	}
	context, err := elicitedValue(answer, "context")
	if err != nil {
		return pdk.PromptResult{}, err
	}
	return pdk.PromptResult{Messages: []pdk.PromptMessage{{Role: "user", Content: pdk.Text("Answer using this context: " + context)}}}, nil
}

//go:wasmexport test_input_required_result_elicitation
func testInputRequiredResultElicitation(ptr, size uint32) uint32 { return irElicitation.Run(ptr, size) }

//go:wasmexport test_input_required_result_sampling
func testInputRequiredResultSampling(ptr, size uint32) uint32 { return irSampling.Run(ptr, size) }

//go:wasmexport test_input_required_result_list_roots
func testInputRequiredResultListRoots(ptr, size uint32) uint32 { return irListRoots.Run(ptr, size) }

//go:wasmexport test_input_required_result_request_state
func testInputRequiredResultRequestState(ptr, size uint32) uint32 {
	return irRequestState.Run(ptr, size)
}

//go:wasmexport test_input_required_result_tampered_state
func testInputRequiredResultTamperedState(ptr, size uint32) uint32 {
	return irTamperedState.Run(ptr, size)
}

//go:wasmexport test_input_required_result_multiple_inputs
func testInputRequiredResultMultipleInputs(ptr, size uint32) uint32 {
	return irMultipleInputs.Run(ptr, size)
}

//go:wasmexport test_input_required_result_multi_round
func testInputRequiredResultMultiRound(ptr, size uint32) uint32 { return irMultiRound.Run(ptr, size) }

//go:wasmexport test_input_required_result_capabilities
func testInputRequiredResultCapabilities(ptr, size uint32) uint32 {
	return irCapabilities.Run(ptr, size)
}

// confirmTool asks the user to confirm and answers prefix plus the "ok"
// value the client sent back.
func confirmTool(slug, description, prefix string) *pdk.ToolDef {
	return pdk.Tool(slug, description,
		func(pdk.Context, none) (pdk.Content, error) {
			answer, err := ask("confirm", pdk.ElicitInput("Please confirm", confirmSchema))
			if err != nil {
				return pdk.Content{}, err
			}
			ok, err := elicitedValue(answer, "ok")
			if err != nil {
				return pdk.Content{}, err
			}
			return text(prefix + ok), nil
		}, pdk.TimeoutMs(60000))
}
