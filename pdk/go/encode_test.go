//go:build !wasip1

package pdk

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"
)

type encInner struct {
	Name string `json:"name"`
	N    int    `json:"n,omitempty"`
}

type encEmbedded struct {
	E string `json:"e"`
}

type encLevel uint8

// encAll has a field of every kind the encoder plans cover.
type encAll struct {
	encEmbedded
	S       string             `json:"s"`
	SE      string             `json:"se,omitempty"`
	B       bool               `json:"b"`
	BE      bool               `json:"be,omitempty"`
	I8      int8               `json:"i8"`
	I16     int16              `json:"i16"`
	I32     int32              `json:"i32,omitzero"`
	I       int                `json:"i"`
	U       uint               `json:"u"`
	U8      uint8              `json:"u8"`
	U64     uint64             `json:"u64"`
	Level   encLevel           `json:"level"`
	F32     float32            `json:"f32"`
	F       float64            `json:"f"`
	FE      float64            `json:"fe,omitempty"`
	FZ      float64            `json:"fz,omitzero"`
	P       *string            `json:"p"`
	PE      *int               `json:"pe,omitempty"`
	Arr     [3]int             `json:"arr"`
	Empty   [0]int             `json:"empty,omitempty"`
	List    []encInner         `json:"list"`
	ListE   []string           `json:"liste,omitempty"`
	ListZ   []string           `json:"listz,omitzero"`
	PList   []*encInner        `json:"plist"`
	Map     map[string]int     `json:"map"`
	MapE    map[string]int     `json:"mape,omitempty"`
	MapS    map[string]string  `json:"maps"`
	MapAny  map[string]any     `json:"mapany"`
	MapList map[string][]int   `json:"maplist"`
	Any     any                `json:"any"`
	AnyE    any                `json:"anye,omitempty"`
	Time    time.Time          `json:"time"`
	PTime   *time.Time         `json:"ptime"`
	Inner   encInner           `json:"inner"`
	PInner  *encInner          `json:"pinner,omitempty"`
	NoTag   string             //
	Skip    string             `json:"-"`
	Dash    string             `json:"-,"`
	Nested  map[string]*encAll `json:"nested,omitempty"`
	private int
}

func TestEncoder_matchesJSONMarshal(t *testing.T) {
	str := "pointed <to> & \"quoted\""
	n := 0
	when := time.Date(2024, 1, 31, 10, 0, 0, 5, time.UTC)
	full := encAll{
		encEmbedded: encEmbedded{E: "embedded"},
		S:           "tab\tnewline\nnul\x00 html <a href='x'>&amp;</a> \u2028\u2029 é 世界 bad \xff\xfe end",
		SE:          "x", B: true, BE: true, I8: -128, I16: math.MaxInt16, I32: -7, I: math.MinInt64,
		U: math.MaxUint64, U8: 255, U64: 1 << 63, Level: 3, F32: 3.14159, F: 1e21, FE: -0.0000001, FZ: math.Copysign(0, -1),
		P: &str, PE: &n, Arr: [3]int{1, 2, 3}, List: []encInner{{"a", 1}, {"b", 0}}, ListE: []string{"y"}, ListZ: []string{},
		PList: []*encInner{nil, {Name: "p"}}, Map: map[string]int{"b": 2, "a": 1, "<": 0}, MapE: map[string]int{},
		MapS: map[string]string{"z": "last", "": "empty", "é": "accent"},
		MapAny: map[string]any{"n": 1.5, "i": 7, "i64": int64(-9), "l": []any{"x", nil, true, map[string]any{}}, "s": encInner{Name: "dyn"},
			"p": &encInner{Name: "ptr"}, "t": when, "u": uint16(9), "nilmap": map[string]any(nil), "nillist": []any(nil)},
		MapList: map[string][]int{"k": {1, 2}, "nil": nil},
		Any:     []any{1e-7, 123.456, float32(0.1), -0.0, 1e20, 1e21, "s"}, AnyE: false,
		Time: when, PTime: &when, Inner: encInner{Name: "inner"}, PInner: &encInner{Name: "p", N: 2},
		NoTag: "untagged", Skip: "skipped", Dash: "dash",
		Nested: map[string]*encAll{"child": {S: "child"}, "nil": nil},
	}
	tests := []struct {
		name  string
		value any
	}{
		{"zero struct", encAll{}},
		{"full struct", full},
		{"pointer to struct", &full},
		{"nil pointer", (*encAll)(nil)},
		{"slice of structs", []encAll{{}, full}},
		{"nil slice", []encInner(nil)},
		{"empty slice", []encInner{}},
		{"map of any", map[string]any{"k": []any{map[string]any{"x": 1.0}}}},
		{"string", "plain"},
		{"float32", float32(1e-7)},
		{"floats", []float64{0, 1, -1, 0.000001, 0.0000001, 1e20, 1e21, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64}},
		{"any holding a struct", any(encInner{Name: "x"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(tt.value)
			if err != nil {
				t.Fatal(err)
			}
			typ := reflect.TypeOf(tt.value)
			plan, ok := compileEncoder(typ, map[reflect.Type]*encNode{})
			if !ok {
				t.Fatalf("no plan for %s", typ)
			}
			v := reflect.New(typ)
			v.Elem().Set(reflect.ValueOf(tt.value))
			e := encoder{buf: []byte("prefix")}
			if !e.encode(plan, v.UnsafePointer(), 0) {
				t.Fatal("the plan gave up")
			}
			if got := e.buf[len("prefix"):]; !bytes.Equal(got, want) {
				t.Errorf("plan wrote\n%s\njson.Marshal wrote\n%s", got, want)
			}
		})
	}
}

type (
	ptrMarshaler struct{ X int }
	withPtrM     struct{ M ptrMarshaler }
	withBytesOut struct{ B []byte }
	withNumOut   struct{ N json.Number }
	withQuoted   struct {
		N int `json:"n,string"`
	}
	zeroer     struct{ X int }
	withIsZero struct {
		Z zeroer `json:"z,omitzero"`
	}
	withZeroArray struct {
		A [2]int `json:"a,omitzero"`
	}
	withIntKeys struct{ M map[int]string }
)

func (p *ptrMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"custom"`), nil }
func (z zeroer) IsZero() bool                        { return z.X < 0 }

func TestCompileEncoder_leavesTypesToJSONMarshal(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[withPtrM](), reflect.TypeFor[withBytesOut](), reflect.TypeFor[withNumOut](),
		reflect.TypeFor[withQuoted](), reflect.TypeFor[withIsZero](), reflect.TypeFor[withZeroArray](),
		reflect.TypeFor[withIntKeys](), reflect.TypeFor[duplicateName](), reflect.TypeFor[embeddedPtr](),
		reflect.TypeFor[chan int](),
	} {
		t.Run(typ.String(), func(t *testing.T) {
			if _, ok := compileEncoder(typ, map[reflect.Type]*encNode{}); ok {
				t.Errorf("compileEncoder took %s", typ)
			}
		})
	}
}

type encChain struct {
	Next *encChain `json:"next,omitempty"`
	V    int       `json:"v"`
}

func TestEncoder_givesUp(t *testing.T) {
	cycle := &encChain{V: 1}
	cycle.Next = cycle
	deep := &encChain{}
	for i := 0; i < 2*maxEncodeDepth; i++ {
		deep = &encChain{Next: deep}
	}
	tests := []struct {
		name  string
		value any
	}{
		{"NaN", math.NaN()},
		{"infinity in an any", []any{math.Inf(1)}},
		{"a cycle", cycle},
		{"deeper than the plan goes", deep},
		{"an unsupported type in an any", []any{[]byte("x")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ := reflect.TypeOf(tt.value)
			plan, ok := compileEncoder(typ, map[reflect.Type]*encNode{})
			if !ok {
				t.Fatalf("no plan for %s", typ)
			}
			v := reflect.New(typ)
			v.Elem().Set(reflect.ValueOf(tt.value))
			e := encoder{}
			if e.encode(plan, v.UnsafePointer(), 0) {
				t.Errorf("the plan wrote %s", e.buf)
			}
		})
	}
	t.Run("a tool returning one reports what json.Marshal reports", func(t *testing.T) {
		tool := Tool("test_cycle", "Cycles.", func(Context, struct{}) (*encChain, error) { return cycle, nil })
		status, out := (&TestHost{}).Call(tool, nil)
		if e := decodedError(t, out); status != statusError || e.Code != CodeToolError || !strings.Contains(e.Message, "encountered a cycle") {
			t.Errorf("status %d, output %s", status, out)
		}
	})
	t.Run("a deep value that json.Marshal can write is written", func(t *testing.T) {
		tool := Tool("test_deep", "Deep.", func(Context, struct{}) (*encChain, error) { return deep, nil })
		status, out := (&TestHost{}).Call(tool, nil)
		want, _ := json.Marshal(deep)
		if status != statusOK || !bytes.Equal(out, want) {
			t.Errorf("status %d, %d bytes of output, want %d", status, len(out), len(want))
		}
	})
}

// FuzzAppendJSONString compares the string encoder with json.Marshal, with
// buffers of every length and spare capacity around the string.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a", "12345678", "123456789", "<>&\"\\", "\x00\x1f\x7f", "é世\u2028\u2029", "\xff\xfe", "long plain string over words"} {
		f.Add(s, uint8(0), uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, prefix, spare uint8) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, int(prefix)%16, int(prefix)%16+int(spare)%24)
		for i := range buf[:cap(buf)] {
			buf[:cap(buf)][i] = '"' // garbage past the string must not matter
		}
		got := appendJSONString(buf, s)
		if !bytes.Equal(got[len(buf):], want) {
			t.Fatalf("appendJSONString(%q) = %s, json.Marshal = %s", s, got[len(buf):], want)
		}
	})
}

// FuzzEncoder compares the plans with json.Marshal on values decoded from
// arbitrary JSON.
func FuzzEncoder(f *testing.F) {
	for _, seed := range []string{
		`{"s":"x<y","i":-3,"f":1.5e300,"list":[{"name":"a"}],"map":{"b":1,"a":2},"any":[1,"x",null,{"k":[]}]}`,
		`{"maps":{"z":"\u2028"},"mapany":{"n":1e-9},"plist":[null,{"name":"é"}],"arr":[1,2,3]}`,
	} {
		f.Add([]byte(seed))
	}
	plan, ok := compileEncoder(reflect.TypeFor[encAll](), map[reflect.Type]*encNode{})
	if !ok {
		f.Fatal("no plan for encAll")
	}
	anyPlan, _ := compileEncoder(reflect.TypeFor[any](), map[reflect.Type]*encNode{})
	f.Fuzz(func(t *testing.T, input []byte) {
		var typed encAll
		if json.Unmarshal(input, &typed) == nil {
			want, err := json.Marshal(typed)
			e := encoder{}
			ok := e.encode(plan, unsafe.Pointer(&typed), 0)
			if err == nil && (!ok || !bytes.Equal(e.buf, want)) {
				t.Fatalf("typed: plan wrote %s (%v), json.Marshal %s", e.buf, ok, want)
			}
		}
		var generic any
		if json.Unmarshal(input, &generic) == nil {
			want, err := json.Marshal(generic)
			e := encoder{}
			ok := e.encode(anyPlan, unsafe.Pointer(&generic), 0)
			if err == nil && (!ok || !bytes.Equal(e.buf, want)) {
				t.Fatalf("any: plan wrote %s (%v), json.Marshal %s", e.buf, ok, want)
			}
		}
	})
}
