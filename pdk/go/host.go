package pdk

import (
	"encoding/json"
	"fmt"
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
