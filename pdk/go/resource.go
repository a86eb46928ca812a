package pdk

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
)

// Resource declares a fixed resource the plugin serves (the manifest's
// resources[]); [ReadResource] reads it.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Export      string `json:"export,omitempty"`
}

// ResourceTemplate declares a family of resources named by a template of
// simple {var} expressions; Completions maps a variable to suggested values.
type ResourceTemplate struct {
	URITemplate string              `json:"uriTemplate"`
	Name        string              `json:"name"`
	Title       string              `json:"title,omitempty"`
	Description string              `json:"description,omitempty"`
	MIMEType    string              `json:"mimeType,omitempty"`
	Export      string              `json:"export,omitempty"`
	Completions map[string][]string `json:"completions,omitempty"`
}

// Prompt declares a prompt the plugin renders with [GetPrompt].
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Export      string           `json:"export,omitempty"`
}

// PromptArgument is one argument of a prompt; Completions are suggested values.
type PromptArgument struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Required    bool     `json:"required,omitempty"`
	Completions []string `json:"completions,omitempty"`
}

// ResourceRequest is what the host asks a resource export to read.
type ResourceRequest struct {
	URI string `json:"uri"`
	// Variables are a template's values, such as {"id": "123"}; nil for a
	// fixed resource.
	Variables map[string]string `json:"variables,omitempty"`
}

// PromptRequest is what the host asks a prompt export to render.
type PromptRequest struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// PromptResult is a rendered prompt.
type PromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// PromptMessage is one message of a prompt: role "user" or "assistant".
type PromptMessage struct {
	Role    string       `json:"role"`
	Content ContentBlock `json:"content"`
}

// ResourceHandler reads a resource; return an [*Error] with [CodeNotFound]
// for a URI it does not serve.
type ResourceHandler func(ResourceRequest) ([]ResourceContents, error)

// PromptHandler renders a prompt.
type PromptHandler func(PromptRequest) (PromptResult, error)

// ReadResource is the body of a resource export (read_resource by default):
// it decodes the request, runs handler and hands {"contents": [...]} or the
// error to the host.
//
//	//go:wasmexport read_resource
//	func readResource(ptr, size uint32) uint32 { return pdk.ReadResource(ptr, size, read) }
func ReadResource(ptr, size uint32, handler ResourceHandler) uint32 {
	return runContent(ptr, size, "read_resource", func(input []byte) (any, error) {
		var req ResourceRequest
		if err := json.Unmarshal(input, &req); err != nil {
			return nil, Errorf(CodeInvalidArguments, "resource request: %v", err)
		}
		contents, err := handler(req)
		if err != nil {
			return nil, err
		}
		if contents == nil {
			contents = []ResourceContents{}
		}
		return struct {
			Contents []ResourceContents `json:"contents"`
		}{contents}, nil
	})
}

// GetPrompt is the body of a prompt export (get_prompt by default).
//
//	//go:wasmexport get_prompt
//	func getPrompt(ptr, size uint32) uint32 { return pdk.GetPrompt(ptr, size, render) }
func GetPrompt(ptr, size uint32, handler PromptHandler) uint32 {
	return runContent(ptr, size, "get_prompt", func(input []byte) (any, error) {
		var req PromptRequest
		if err := json.Unmarshal(input, &req); err != nil {
			return nil, Errorf(CodeInvalidArguments, "prompt request: %v", err)
		}
		res, err := handler(req)
		if err != nil {
			return nil, err
		}
		if res.Messages == nil {
			res.Messages = []PromptMessage{}
		}
		return res, nil
	})
}

// runContent runs a resource or prompt export the way Run runs a tool.
func runContent(ptr, size uint32, export string, run func([]byte) (any, error)) (status uint32) {
	input, ok := inputs.take(ptr, size)
	if !ok {
		hostOutputSet(encodeError(Errorf(CodeToolError, "the input at %d (%d bytes) was not allocated by wb_alloc", ptr, size)))
		return statusError
	}
	defer func() {
		if r := recover(); r != nil {
			LogError("panic in %s: %v\n%s", export, r, debug.Stack())
			hostOutputSet(encodeError(Errorf(CodeToolError, "panic in %s: %v", export, r)))
			status = statusError
		}
	}()
	res, err := run(input)
	if err == nil {
		var out []byte
		if out, err = json.Marshal(res); err == nil {
			hostOutputSet(out)
			return statusOK
		}
		err = Errorf(CodeToolError, "encoding the result of %s: %v", export, err)
	}
	hostOutputSet(encodeError(toolError(err)))
	return statusError
}

// checkContentExports reports an export name that a resource or prompt may not use.
func checkContentExports(p Plugin, toolExports map[string]string) error {
	check := func(field, export, def string) error {
		if export == "" {
			export = def
		}
		switch {
		case reservedExport(export):
			return fmt.Errorf("%s %q is reserved", field, export)
		case toolExports[export] != "":
			return fmt.Errorf("%s %q is also the export of %s", field, export, toolExports[export])
		}
		return nil
	}
	for i, r := range p.Resources {
		if err := check(fmt.Sprintf("resources[%d].export", i), r.Export, "read_resource"); err != nil {
			return err
		}
	}
	for i, r := range p.ResourceTemplates {
		if err := check(fmt.Sprintf("resourceTemplates[%d].export", i), r.Export, "read_resource"); err != nil {
			return err
		}
	}
	for i, r := range p.Prompts {
		if err := check(fmt.Sprintf("prompts[%d].export", i), r.Export, "get_prompt"); err != nil {
			return err
		}
	}
	return nil
}

func reservedExport(name string) bool {
	return len(name) >= 3 && name[:3] == "wb_" || len(name) > 0 && name[0] == '_' || name == "manifest" || name == "memory"
}
