package pdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// Log levels of the log import.
const (
	levelDebug int32 = 0
	levelInfo  int32 = 1
	levelWarn  int32 = 2
	levelError int32 = 3
)

// Config returns a setting from the host: "base_url", one of the plugin's
// declared settings, or a non-secret field of the caller's connection. The
// boolean is false when the setting has no value.
func Config(key string) (string, bool) {
	return hostConfigGet(key)
}

// LogDebug writes a debug record to the plugin's log.
func LogDebug(format string, args ...any) { hostLog(levelDebug, fmt.Sprintf(format, args...)) }

// LogInfo writes an info record to the plugin's log.
func LogInfo(format string, args ...any) { hostLog(levelInfo, fmt.Sprintf(format, args...)) }

// LogWarn writes a warning record to the plugin's log.
func LogWarn(format string, args ...any) { hostLog(levelWarn, fmt.Sprintf(format, args...)) }

// LogError writes an error record to the plugin's log.
func LogError(format string, args ...any) { hostLog(levelError, fmt.Sprintf(format, args...)) }

// Progress reports progress of the running call; total 0 means unknown. The
// host forwards it when the client asked for progress.
func Progress(done, total float64, message string) {
	hostProgress(done, total, message)
}

// ElicitResult is the user's answer to [Elicit]: Action is "accept",
// "decline" or "cancel"; Content holds the accepted values.
type ElicitResult struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
}

// Elicit asks the user through the MCP client: message is shown, and
// requestedSchema (MCP elicitation's flat object schema, any value that
// encodes to it) describes the values asked for. It fails with an *Error:
// UNSUPPORTED when the client did not declare elicitation, CANCELED,
// CLIENT_ERROR, TOO_MANY_REQUESTS or INVALID_REQUEST.
func Elicit(message string, requestedSchema any) (ElicitResult, error) {
	req, err := json.Marshal(struct {
		Message         string `json:"message"`
		RequestedSchema any    `json:"requestedSchema"`
	}{message, requestedSchema})
	if err != nil {
		return ElicitResult{}, Errorf(CodeInvalidArguments, "elicitation request: %v", err)
	}
	res, err := talkBack("elicit", req)
	if err != nil {
		return ElicitResult{}, err
	}
	var out ElicitResult
	if err := json.Unmarshal(res, &out); err != nil {
		return ElicitResult{}, Errorf(CodeToolError, "elicitation result: %v", err)
	}
	return out, nil
}

// Sample asks the client's model for a completion. request is the params
// object of MCP sampling/createMessage (any value that encodes to it); the
// result is its result object. Failures are as for [Elicit].
func Sample(request any) (json.RawMessage, error) {
	req, err := json.Marshal(request)
	if err != nil {
		return nil, Errorf(CodeInvalidArguments, "sampling request: %v", err)
	}
	return talkBack("sample", req)
}

// InputRequest is one question of [Input]: Method is "elicitation/create",
// "sampling/createMessage" or "roots/list"; Params is its MCP params object
// (any value that encodes to it; nil for roots/list).
type InputRequest struct {
	Method string `json:"method"`
	Params any    `json:"params,omitempty"`
}

// ElicitInput asks the user, as [Elicit] does; its result decodes into an
// [ElicitResult].
func ElicitInput(message string, requestedSchema any) InputRequest {
	return InputRequest{Method: "elicitation/create", Params: struct {
		Message         string `json:"message"`
		RequestedSchema any    `json:"requestedSchema"`
	}{message, requestedSchema}}
}

// SampleInput asks the client's model, as [Sample] does: params is the
// params object of sampling/createMessage.
func SampleInput(params any) InputRequest {
	return InputRequest{Method: "sampling/createMessage", Params: params}
}

// RootsInput asks for the client's roots; the result is {"roots": [...]}.
func RootsInput() InputRequest {
	return InputRequest{Method: "roots/list"}
}

// Input asks the MCP client several questions at once and returns its
// result objects by the same keys (1 to 64 letters, digits, '_', '.', ':'
// or '-'). Failures are as for [Elicit]; UNSUPPORTED names every missing
// capability (see [MissingCapabilities]).
//
// On a 2026-07-28 request the client cannot be asked during the call: when
// it has not answered yet, the call ends inside Input (the tool never
// returns) with an input-required result, and the tool runs again from the
// start when the client calls back with its answers, which Input, Elicit
// and Sample then return. A tool must therefore do nothing it cannot repeat
// before its questions are answered: ask first, act after.
func Input(requests map[string]InputRequest) (map[string]json.RawMessage, error) {
	req, err := json.Marshal(requests)
	if err != nil {
		return nil, Errorf(CodeInvalidArguments, "input request: %v", err)
	}
	res, err := talkBack("input", req)
	if err != nil {
		return nil, err
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, Errorf(CodeToolError, "input result: %v", err)
	}
	return out, nil
}

// MissingCapabilities returns the client capabilities ("elicitation",
// "sampling", "roots") an UNSUPPORTED error from [Elicit], [Sample] or
// [Input] names, sorted; nil for any other error.
func MissingCapabilities(err error) []string {
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeUnsupported {
		return nil
	}
	b, merr := json.Marshal(e.Details)
	var d struct {
		RequiredCapabilities map[string]json.RawMessage `json:"requiredCapabilities"`
	}
	if merr != nil || json.Unmarshal(b, &d) != nil {
		return nil
	}
	var out []string
	for c := range d.RequiredCapabilities {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

func talkBack(kind string, req []byte) (json.RawMessage, error) {
	res, failure := hostTalkBack(kind, req)
	if failure == nil {
		return res, nil
	}
	var e Error
	if err := json.Unmarshal(failure, &e); err != nil || e.Message == "" {
		return nil, Errorf(CodeToolError, "%s failed: %s", kind, failure)
	}
	return nil, &e
}
