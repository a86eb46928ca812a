package pdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"unsafe"
)

// Context carries what a handler knows about the call it serves.
type Context struct {
	tool string
}

// Tool returns the slug of the tool being called.
func (c Context) Tool() string { return c.tool }

// ToolDef is a declared tool: its manifest entry and its typed handler. Create
// it with [Tool], pass it to [Register], and call [ToolDef.Run] from the
// tool's //go:wasmexport function.
type ToolDef struct {
	slug        string
	description string
	title       string
	export      string
	annotations annotations
	limits      ToolLimits
	inType      reflect.Type
	outType     reflect.Type
	// inputSchema, when set, is advertised instead of the schema of inType.
	inputSchema json.RawMessage
	// call decodes the input into the handler's type, runs the handler and
	// appends the result's JSON to buf.
	call func(ctx Context, input, buf []byte) ([]byte, error)

	schemaOnce sync.Once
	schemas    toolSchemas
	planOnce   sync.Once
	plans      toolPlans
	refOnce    sync.Once
	reference  referenceDecoder
}

// toolSchemas are a tool's input schema, built on first use: by the
// manifest export, or by the first call of the tool in an instance.
type toolSchemas struct {
	input       *schema
	hasDefaults bool
	err         error
}

// toolPlans are what a call needs, compiled from the tool's types on its
// first call in an instance.
type toolPlans struct {
	decoder *decNode // nil: every input takes the reference path
	encoder *encNode // nil: every result goes through json.Marshal
	err     error    // the input schema is invalid
}

// referenceDecoder is the reference path of an input: the validator and
// the defaults, compiled when an input first needs it.
type referenceDecoder struct {
	validator *validator
	defaults  *defaulter // nil when the input has no defaults
	err       error
}

// ToolLimits are a tool's overrides of the plugin's limits.
type ToolLimits struct {
	TimeoutMs     int `json:"timeoutMs,omitempty"`
	OutputBytes   int `json:"outputBytes,omitempty"`
	ResponseBytes int `json:"responseBytes,omitempty"`
	Concurrency   int `json:"concurrency,omitempty"`
}

// ToolOption sets an optional part of a tool's manifest entry.
type ToolOption func(*ToolDef)

// Title sets the tool's human-readable title (at most 120 characters).
func Title(title string) ToolOption { return func(t *ToolDef) { t.title = title } }

// ReadOnly marks a tool that does not change anything.
func ReadOnly() ToolOption { return func(t *ToolDef) { t.annotations.ReadOnly = true } }

// Destructive marks a tool that may delete or overwrite data.
func Destructive() ToolOption { return func(t *ToolDef) { t.annotations.Destructive = true } }

// Idempotent marks a tool whose repeated calls with the same input have no
// further effect.
func Idempotent() ToolOption { return func(t *ToolDef) { t.annotations.Idempotent = true } }

// OpenWorld marks a tool that talks to an outside system.
func OpenWorld() ToolOption { return func(t *ToolDef) { t.annotations.OpenWorld = true } }

// TimeoutMs requests a per-call deadline for this tool.
func TimeoutMs(ms int) ToolOption { return func(t *ToolDef) { t.limits.TimeoutMs = ms } }

// OutputBytes requests an output size limit for this tool.
func OutputBytes(n int) ToolOption { return func(t *ToolDef) { t.limits.OutputBytes = n } }

// ResponseBytes requests a per-request response size limit for this tool.
func ResponseBytes(n int) ToolOption { return func(t *ToolDef) { t.limits.ResponseBytes = n } }

// Concurrency requests a concurrent-call limit for this tool.
func Concurrency(n int) ToolOption { return func(t *ToolDef) { t.limits.Concurrency = n } }

// InputSchema advertises schema (a JSON Schema object with "type":
// "object") as the tool's inputSchema instead of the one generated from the
// handler's input type, for keywords Go types cannot express ($defs, $ref,
// a $schema dialect). Input is still decoded and checked against the Go
// type, so keep the two in agreement.
func InputSchema(schema string) ToolOption {
	return func(t *ToolDef) { t.inputSchema = json.RawMessage(schema) }
}

// Export names the tool's wasm export when it differs from the slug.
func Export(name string) ToolOption { return func(t *ToolDef) { t.export = name } }

// Tool declares a tool with a typed handler. In must be a struct (or a
// pointer to one): its JSON Schema becomes the tool's inputSchema, and input
// is decoded into it strictly (unknown fields, wrong types, missing required
// fields and values outside the schema are INVALID_ARGUMENTS errors naming the
// field). Out's schema becomes the outputSchema when it is an object.
//
// A handler's *Error keeps its code; any other error is TOOL_ERROR; a panic is
// recovered and reported as TOOL_ERROR.
func Tool[In, Out any](slug, description string, handler func(Context, In) (Out, error), opts ...ToolOption) *ToolDef {
	t := &ToolDef{
		slug:        slug,
		description: description,
		export:      slug,
		inType:      reflect.TypeFor[In](),
		outType:     reflect.TypeFor[Out](),
	}
	var inputSlots scratch[In]
	var resultSlots scratch[Out]
	t.call = func(ctx Context, input, buf []byte) ([]byte, error) {
		plans := t.buildPlans()
		if plans.err != nil {
			return nil, Errorf(CodeToolError, "tool %s has an invalid schema: %v", t.slug, plans.err)
		}
		inp := inputSlots.get()
		if plans.decoder == nil || !decodeFast(plans.decoder, input, unsafe.Pointer(inp)) {
			var zero In
			*inp = zero // drop what the fast path may have written
			if err := t.decodeReference(input, inp); err != nil {
				inputSlots.put(inp)
				return nil, err
			}
		}
		in := *inp
		inputSlots.put(inp)
		out, err := handler(ctx, in)
		if e, ok := err.(*Error); ok && e == nil {
			err = nil // a typed nil *Error is a success, not a crash
		}
		if err != nil {
			return nil, err
		}
		if plans.encoder != nil {
			outp := resultSlots.get()
			*outp = out
			enc := encoder{buf: buf}
			ok := enc.encode(plans.encoder, unsafe.Pointer(outp), 0)
			resultSlots.put(outp)
			if ok {
				return enc.buf, nil
			}
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, Errorf(CodeToolError, "encoding the result of %s: %v", t.slug, err)
		}
		return b, nil
	}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Slug returns the tool's slug.
func (t *ToolDef) Slug() string { return t.slug }

// Run is the body of the tool's wasm export: it takes the input the host
// placed at ptr (through wb_alloc), runs the handler, hands the result or the
// error to the host with output_set and returns the status (0 or 1).
func (t *ToolDef) Run(ptr, size uint32) uint32 {
	input, ok := inputs.take(ptr, size)
	if !ok {
		out := encodeError(Errorf(CodeToolError,
			"the input at %d (%d bytes) was not allocated by wb_alloc", ptr, size))
		hostOutputSet(out)
		return statusError
	}
	buf := spareOutput.Swap(nil)
	if buf == nil {
		buf = &outputBuffer{}
	}
	out, status := t.invoke(input, buf.b[:0])
	hostOutputSet(out)
	// The host copied the output: its buffer serves the next call.
	if cap(out) <= maxSpareOutput {
		buf.b = out
		spareOutput.Store(buf)
	}
	return status
}

// scratch keeps one heap value of type T between calls. A tool decodes its
// input into one and encodes its result from one: taking the address of a
// local would make the compiler allocate it on every call, and an
// allocation costs about a microsecond in wasm. A value in use is taken out,
// so concurrent native callers get their own.
type scratch[T any] struct {
	spare spare[T]
}

func (s *scratch[T]) get() *T {
	if p := s.spare.Swap(nil); p != nil {
		return p
	}
	return new(T)
}

// put clears p, so the scratch value keeps nothing alive, and keeps it for
// the next call.
func (s *scratch[T]) put(p *T) {
	var zero T
	*p = zero
	s.spare.Store(p)
}

// outputBuffer holds the bytes of one output while a call writes it.
type outputBuffer struct{ b []byte }

// spareOutput keeps the last output's buffer for the next call; one is
// enough, since an instance serves one call at a time.
var spareOutput spare[outputBuffer]

// maxSpareOutput caps the buffer kept between calls, so an idle instance
// does not hold on to a large output.
const maxSpareOutput = 64 << 10

// Statuses of docs/abi.md section 3.
const (
	statusOK    uint32 = 0
	statusError uint32 = 1
)

// invoke runs the tool on input and returns the output bytes (the result
// appended to buf, or an error object) and the status.
func (t *ToolDef) invoke(input, buf []byte) (out []byte, status uint32) {
	defer func() {
		if r := recover(); r != nil {
			LogError("panic in tool %s: %v\n%s", t.slug, r, debug.Stack())
			out, status = encodeError(Errorf(CodeToolError, "panic in tool %s: %v", t.slug, r)), statusError
		}
	}()
	result, err := t.call(Context{tool: t.slug}, input, buf)
	if err != nil {
		return encodeError(toolError(err)), statusError
	}
	return result, statusOK
}

// encodeError returns the JSON error object for e. Details that cannot be
// encoded are dropped rather than losing the error.
func encodeError(e *Error) []byte {
	b, err := json.Marshal(e)
	if err != nil {
		b, _ = json.Marshal(&Error{Code: e.Code, Message: e.Message})
	}
	return b
}

// buildSchemas generates the tool's input schema once.
func (t *ToolDef) buildSchemas() *toolSchemas {
	t.schemaOnce.Do(func() {
		s := &t.schemas
		in, hasDefaults, err := schemaFor(t.inType)
		if err != nil {
			s.err = fmt.Errorf("inputSchema: %w", err)
			return
		}
		if in.typ != "object" {
			s.err = fmt.Errorf("inputSchema: type must be \"object\": the input type %s is not a struct", t.inType)
			return
		}
		s.input, s.hasDefaults = in, hasDefaults
	})
	return &t.schemas
}

// buildPlans compiles the call plans of the tool once.
func (t *ToolDef) buildPlans() *toolPlans {
	t.planOnce.Do(func() {
		p := &t.plans
		s := t.buildSchemas()
		if s.err != nil {
			p.err = s.err
			return
		}
		if d, ok := compileDecoder(t.inType, s.input); ok {
			p.decoder = d
		}
		if e, ok := compileEncoder(t.outType, map[reflect.Type]*encNode{}); ok {
			p.encoder = e
		}
	})
	return &t.plans
}

// buildReference compiles the reference decoding of the input once.
func (t *ToolDef) buildReference() *referenceDecoder {
	t.refOnce.Do(func() {
		r := &t.reference
		s := t.buildSchemas()
		if s.err != nil {
			r.err = s.err
			return
		}
		var err error
		if r.validator, err = compileValidator(s.input); err != nil {
			r.err = fmt.Errorf("inputSchema: %w", err)
			return
		}
		if s.hasDefaults {
			if r.defaults, err = compileDefaulter(t.inType, s.input); err != nil {
				r.err = fmt.Errorf("inputSchema: %w", err)
			}
		}
	})
	return &t.reference
}

// manifestEntry returns the tool's entry in the manifest.
func (t *ToolDef) manifestEntry() (toolManifest, error) {
	tm := toolManifest{
		Slug: t.slug, Title: t.title, Description: t.description,
		Annotations: t.annotations, Export: t.export, Limits: t.limits,
	}
	if strings.TrimSpace(t.description) == "" {
		return tm, errors.New("description is required")
	}
	if t.annotations.ReadOnly && t.annotations.Destructive {
		return tm, errors.New("a tool cannot be both ReadOnly and Destructive")
	}
	s := t.buildSchemas()
	if s.err != nil {
		return tm, s.err
	}
	var err error
	if tm.InputSchema, err = s.input.marshal(); err != nil {
		return tm, fmt.Errorf("inputSchema: %w", err)
	}
	if t.inputSchema != nil {
		var probe struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(t.inputSchema, &probe); err != nil || probe.Type != "object" {
			return tm, fmt.Errorf("inputSchema: the schema given to InputSchema must be a JSON object with \"type\": \"object\"")
		}
		tm.InputSchema = t.inputSchema
	}
	if t.outType == contentType {
		return tm, nil // a content result has no output schema
	}
	// The output schema is only needed here, so it is not kept.
	out, _, err := schemaFor(t.outType)
	if err != nil {
		return tm, fmt.Errorf("outputSchema: %w", err)
	}
	if out.typ == "object" {
		if tm.OutputSchema, err = out.marshal(); err != nil {
			return tm, fmt.Errorf("outputSchema: %w", err)
		}
	}
	return tm, nil
}

// decodeReference decodes input into dst (a pointer to the handler's zero
// input) after checking it against the input schema, then fills in
// defaults: the reference for what the fast path (decodeFast) does, and the
// path for every input that one gives up on. Every failure is
// INVALID_ARGUMENTS naming the field.
func (t *ToolDef) decodeReference(input []byte, dst any) error {
	if len(bytes.TrimSpace(input)) == 0 {
		input = []byte("{}")
	}
	r := t.buildReference()
	if r.err != nil {
		return Errorf(CodeToolError, "tool %s has an invalid schema: %v", t.slug, r.err)
	}
	var instance any
	if err := json.Unmarshal(input, &instance); err != nil {
		return decodeError(err)
	}
	if e := r.validator.check("", instance); e != nil {
		return e
	}
	// The schema check already refused unknown fields (struct schemas are
	// closed), so a plain Unmarshal is as strict as a decoder with
	// DisallowUnknownFields.
	if err := json.Unmarshal(input, dst); err != nil {
		return decodeError(err)
	}
	if r.defaults != nil {
		r.defaults.apply(reflect.ValueOf(dst), instance)
	}
	return nil
}

// decodeError turns an encoding/json error into INVALID_ARGUMENTS naming the
// field when there is one. Most problems are caught earlier by the schema
// check; these remain for what only the Go type knows (a number too large
// for its field, a time that does not parse).
func decodeError(err error) *Error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return InvalidArguments("field %q: expected %s, got %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value).
			WithDetails(map[string]string{"field": typeErr.Field})
	case errors.As(err, &syntaxErr):
		return InvalidArguments("the input is not valid JSON: %v (at byte %d)", syntaxErr, syntaxErr.Offset)
	}
	return InvalidArguments("%v", err)
}

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return "object"
}
