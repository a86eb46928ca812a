package pdk

import (
	"encoding/json"
	"reflect"
)

// Content is a tool result made of MCP content blocks instead of plain JSON
// (docs/abi.md, "Content results"): return it from a handler to send text,
// images, audio or embedded resources. Structured, when not nil, is sent as
// the result's structuredContent and must encode to a JSON object. A tool
// whose handler returns Content declares no output schema.
type Content struct {
	Blocks     []ContentBlock
	Structured any
}

// MarshalJSON encodes c as the {"$content": [...], "$structured": ...}
// envelope the host maps to MCP content.
func (c Content) MarshalJSON() ([]byte, error) {
	blocks := c.Blocks
	if blocks == nil {
		blocks = []ContentBlock{}
	}
	return json.Marshal(struct {
		Content    []ContentBlock `json:"$content"`
		Structured any            `json:"$structured,omitempty"`
	}{blocks, c.Structured})
}

// contentType is the handler result type that declares no output schema.
var contentType = reflect.TypeFor[Content]()

// ContentBlock is one MCP content block. Build it with [Text], [Image],
// [Audio], [EmbeddedText], [EmbeddedBlob] or [ResourceLink].
type ContentBlock struct {
	Type     string            `json:"type"`
	Text     string            `json:"text,omitempty"`
	Data     []byte            `json:"data,omitempty"` // base64 in JSON
	MIMEType string            `json:"mimeType,omitempty"`
	Resource *ResourceContents `json:"resource,omitempty"`
	URI      string            `json:"uri,omitempty"`
	Name     string            `json:"name,omitempty"`
}

// Text is a text block.
func Text(s string) ContentBlock { return ContentBlock{Type: "text", Text: s} }

// Image is an image block; mimeType is such as "image/png".
func Image(data []byte, mimeType string) ContentBlock {
	return ContentBlock{Type: "image", Data: data, MIMEType: mimeType}
}

// Audio is an audio block; mimeType is such as "audio/wav".
func Audio(data []byte, mimeType string) ContentBlock {
	return ContentBlock{Type: "audio", Data: data, MIMEType: mimeType}
}

// EmbeddedText is an embedded text resource.
func EmbeddedText(uri, mimeType, text string) ContentBlock {
	return ContentBlock{Type: "resource", Resource: &ResourceContents{URI: uri, MIMEType: mimeType, Text: text}}
}

// EmbeddedBlob is an embedded binary resource.
func EmbeddedBlob(uri, mimeType string, blob []byte) ContentBlock {
	return ContentBlock{Type: "resource", Resource: &ResourceContents{URI: uri, MIMEType: mimeType, Blob: blob}}
}

// ResourceLink points at a resource the client may read.
func ResourceLink(uri, name string) ContentBlock {
	return ContentBlock{Type: "resource_link", URI: uri, Name: name}
}

// ResourceContents is one item a resource read returns: Text or Blob.
// Empty URI and MIMEType take the requested URI and the declared type.
type ResourceContents struct {
	URI      string `json:"uri,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     []byte `json:"blob,omitempty"` // base64 in JSON
}
