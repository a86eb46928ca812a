package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
)

// contentKey marks a content result (docs/abi.md, "Content results"): a
// result object with this key carries MCP content blocks, and structuredKey
// beside it the structured content.
const (
	contentKey    = "$content"
	structuredKey = "$structured"
)

// contentResult is a decoded content result.
type contentResult struct {
	blocks     []sdk.Content
	structured json.RawMessage // nil when absent
}

// parseContentResult reports whether out is a content result and, if so,
// decodes it. A malformed one is a BAD_OUTPUT error naming the problem.
func parseContentResult(out json.RawMessage) (*contentResult, bool, *metatools.Error) {
	if !isObject(out) || !bytes.Contains(out, []byte(`"`+contentKey+`"`)) {
		return nil, false, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(out, &fields); err != nil {
		return nil, false, nil
	}
	raw, ok := fields[contentKey]
	if !ok {
		return nil, false, nil
	}
	for k := range fields {
		if k != contentKey && k != structuredKey {
			return nil, true, badOutput("a content result may hold only %s and %s, not %q", contentKey, structuredKey, k)
		}
	}
	var wire []json.RawMessage
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, true, badOutput("%s must be a list of content blocks", contentKey)
	}
	res := &contentResult{}
	for i, w := range wire {
		c, err := contentBlock(w)
		if err != nil {
			return nil, true, badOutput("%s[%d]: %v", contentKey, i, err)
		}
		res.blocks = append(res.blocks, c)
	}
	if s, ok := fields[structuredKey]; ok && string(s) != "null" {
		if !isObject(s) {
			return nil, true, badOutput("%s must be an object", structuredKey)
		}
		res.structured = s
	}
	return res, true, nil
}

func badOutput(format string, args ...any) *metatools.Error {
	return &metatools.Error{Code: failure.ToolError, Reason: failure.BadOutput, Message: "the tool returned a malformed content result: " + fmt.Sprintf(format, args...)}
}

// wireBlock is a content block as a plugin writes it.
type wireBlock struct {
	Type        string          `json:"type"`
	Text        *string         `json:"text"`
	Data        []byte          `json:"data"`
	MIMEType    string          `json:"mimeType"`
	Resource    *wireResource   `json:"resource"`
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Size        *int64          `json:"size"`
	Annotations json.RawMessage `json:"annotations"`
}

// wireResource is the contents of an embedded resource or of a read.
type wireResource struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType"`
	Text     *string `json:"text"`
	Blob     []byte  `json:"blob"`
}

// contentBlock decodes and checks one content block: the kinds of MCP's
// ContentBlock, each with its required fields. Base64 data is checked by
// decoding it.
func contentBlock(raw json.RawMessage) (sdk.Content, error) {
	var w wireBlock
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("not a content block: %v", err)
	}
	var ann *sdk.Annotations
	if len(w.Annotations) > 0 && string(w.Annotations) != "null" {
		ann = new(sdk.Annotations)
		if err := json.Unmarshal(w.Annotations, ann); err != nil {
			return nil, fmt.Errorf("annotations: %v", err)
		}
	}
	switch w.Type {
	case "text":
		if w.Text == nil {
			return nil, fmt.Errorf("a text block needs text")
		}
		return &sdk.TextContent{Text: *w.Text, Annotations: ann}, nil
	case "image", "audio":
		if len(w.Data) == 0 || w.MIMEType == "" {
			return nil, fmt.Errorf("an %s block needs data (base64) and mimeType", w.Type)
		}
		if w.Type == "image" {
			return &sdk.ImageContent{Data: w.Data, MIMEType: w.MIMEType, Annotations: ann}, nil
		}
		return &sdk.AudioContent{Data: w.Data, MIMEType: w.MIMEType, Annotations: ann}, nil
	case "resource":
		if w.Resource == nil {
			return nil, fmt.Errorf("a resource block needs resource")
		}
		rc, err := resourceContents(w.Resource, "", "")
		if err != nil {
			return nil, fmt.Errorf("resource: %v", err)
		}
		return &sdk.EmbeddedResource{Resource: rc, Annotations: ann}, nil
	case "resource_link":
		if w.URI == "" || w.Name == "" {
			return nil, fmt.Errorf("a resource_link block needs uri and name")
		}
		return &sdk.ResourceLink{URI: w.URI, Name: w.Name, Title: w.Title, Description: w.Description, MIMEType: w.MIMEType, Size: w.Size, Annotations: ann}, nil
	default:
		return nil, fmt.Errorf("unknown content type %q (text, image, audio, resource, resource_link)", w.Type)
	}
}

// resourceContents checks one item of resource contents, filling in the
// URI and media type when the plugin left them out.
func resourceContents(w *wireResource, uri, mimeType string) (*sdk.ResourceContents, error) {
	rc := &sdk.ResourceContents{URI: w.URI, MIMEType: w.MIMEType}
	if rc.URI == "" {
		rc.URI = uri
	}
	if rc.MIMEType == "" {
		rc.MIMEType = mimeType
	}
	switch {
	case rc.URI == "":
		return nil, fmt.Errorf("uri is required")
	case w.Text != nil && w.Blob != nil:
		return nil, fmt.Errorf("text and blob are exclusive")
	case w.Text != nil:
		rc.Text = *w.Text
	case w.Blob != nil:
		rc.Blob = w.Blob
	default:
		return nil, fmt.Errorf("text or blob (base64) is required")
	}
	return rc, nil
}
