package newrelictest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is a small GraphQL reader: one operation (query or mutation)
// with variable definitions, fields with aliases and arguments, and inline
// fragments. Fragment definitions, directives and block strings are not
// supported and are reported as errors, which is enough for a fake that
// must refuse what it does not understand.

// operation is a parsed GraphQL document with one operation.
type operation struct {
	Kind string // "query" or "mutation"
	Name string
	Vars []varDef
	Sel  []*selection
}

// varDef is one variable definition, such as $accountId: Int!.
type varDef struct {
	Name string
	Type string
}

// selection is a field or, when On is set, an inline fragment.
type selection struct {
	Alias, Name string
	Args        []argument
	Sel         []*selection
	On          string
	Line, Col   int
}

// responseKey is the alias or the field name.
func (s *selection) responseKey() string {
	if s.Alias != "" {
		return s.Alias
	}
	return s.Name
}

type argument struct {
	Name  string
	Value value
}

// valueKind is the kind of a literal or variable in a document.
type valueKind int

const (
	kindVariable valueKind = iota
	kindInt
	kindFloat
	kindString
	kindBool
	kindNull
	kindEnum
	kindList
	kindObject
)

// value is an argument value as written in the document.
type value struct {
	Kind   valueKind
	Text   string // variable name, number, string, enum name
	Bool   bool
	List   []value
	Fields []argument
}

// resolve turns v into plain Go data, reading variables from vars.
func (v value) resolve(vars map[string]any) any {
	switch v.Kind {
	case kindVariable:
		return vars[v.Text]
	case kindInt:
		n, _ := strconv.ParseInt(v.Text, 10, 64)
		return float64(n)
	case kindFloat:
		f, _ := strconv.ParseFloat(v.Text, 64)
		return f
	case kindString, kindEnum:
		return v.Text
	case kindBool:
		return v.Bool
	case kindList:
		out := make([]any, len(v.List))
		for i, e := range v.List {
			out[i] = e.resolve(vars)
		}
		return out
	case kindObject:
		out := map[string]any{}
		for _, f := range v.Fields {
			out[f.Name] = f.Value.resolve(vars)
		}
		return out
	}
	return nil
}

// token is one lexical token.
type token struct {
	kind      byte // 'n' name, 'i' int, 'f' float, 's' string, 'p' punctuator, 0 end
	text      string
	line, col int
}

type lexer struct {
	src       string
	pos       int
	line, col int
}

// syntaxError is a GraphQL syntax error with its location.
type syntaxError struct {
	msg       string
	line, col int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("Syntax Error: %s", e.msg) }

func (l *lexer) advance(n int) {
	for i := 0; i < n && l.pos < len(l.src); i++ {
		if l.src[l.pos] == '\n' {
			l.line++
			l.col = 1
		} else {
			l.col++
		}
		l.pos++
	}
}

func isNameStart(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isNameChar(c byte) bool  { return isNameStart(c) || (c >= '0' && c <= '9') }
func isDigit(c byte) bool     { return c >= '0' && c <= '9' }

func (l *lexer) next() (token, error) {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',':
			l.advance(1)
		case c == '#':
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.advance(1)
			}
		default:
			return l.token()
		}
	}
	return token{line: l.line, col: l.col}, nil
}

func (l *lexer) token() (token, error) {
	start, line, col := l.pos, l.line, l.col
	c := l.src[l.pos]
	fail := func(msg string) (token, error) { return token{}, &syntaxError{msg, line, col} }
	switch {
	case strings.HasPrefix(l.src[l.pos:], "..."):
		l.advance(3)
		return token{'p', "...", line, col}, nil
	case strings.ContainsRune("!$():=@[]{}|", rune(c)):
		l.advance(1)
		return token{'p', string(c), line, col}, nil
	case isNameStart(c):
		for l.pos < len(l.src) && isNameChar(l.src[l.pos]) {
			l.advance(1)
		}
		return token{'n', l.src[start:l.pos], line, col}, nil
	case c == '-' || isDigit(c):
		kind := byte('i')
		if c == '-' {
			l.advance(1)
		}
		if l.pos >= len(l.src) || !isDigit(l.src[l.pos]) {
			return fail("Invalid number.")
		}
		for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
			l.advance(1)
		}
		if l.pos < len(l.src) && l.src[l.pos] == '.' {
			kind = 'f'
			l.advance(1)
			if l.pos >= len(l.src) || !isDigit(l.src[l.pos]) {
				return fail("Invalid number, expected digit after \".\".")
			}
			for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
				l.advance(1)
			}
		}
		if l.pos < len(l.src) && (l.src[l.pos] == 'e' || l.src[l.pos] == 'E') {
			kind = 'f'
			l.advance(1)
			if l.pos < len(l.src) && (l.src[l.pos] == '+' || l.src[l.pos] == '-') {
				l.advance(1)
			}
			if l.pos >= len(l.src) || !isDigit(l.src[l.pos]) {
				return fail("Invalid number, expected digit in exponent.")
			}
			for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
				l.advance(1)
			}
		}
		return token{kind, l.src[start:l.pos], line, col}, nil
	case c == '"':
		if strings.HasPrefix(l.src[l.pos:], `"""`) {
			return fail("Block strings are not supported by this fake.")
		}
		l.advance(1)
		var b strings.Builder
		for l.pos < len(l.src) {
			ch := l.src[l.pos]
			switch {
			case ch == '"':
				l.advance(1)
				return token{'s', b.String(), line, col}, nil
			case ch == '\n' || ch == '\r':
				return fail("Unterminated string.")
			case ch == '\\':
				if l.pos+1 >= len(l.src) {
					return fail("Unterminated string.")
				}
				esc := l.src[l.pos+1]
				switch esc {
				case '"', '\\', '/':
					b.WriteByte(esc)
				case 'b':
					b.WriteByte('\b')
				case 'f':
					b.WriteByte('\f')
				case 'n':
					b.WriteByte('\n')
				case 'r':
					b.WriteByte('\r')
				case 't':
					b.WriteByte('\t')
				case 'u':
					if l.pos+6 > len(l.src) {
						return fail("Invalid Unicode escape sequence.")
					}
					n, err := strconv.ParseUint(l.src[l.pos+2:l.pos+6], 16, 32)
					if err != nil {
						return fail("Invalid Unicode escape sequence.")
					}
					b.WriteRune(rune(n))
					l.advance(4)
				default:
					return fail(fmt.Sprintf("Invalid character escape sequence: \\%c.", esc))
				}
				l.advance(2)
			default:
				r, size := utf8.DecodeRuneInString(l.src[l.pos:])
				if r < 0x20 && r != '\t' {
					return fail("Invalid character within String.")
				}
				b.WriteString(l.src[l.pos : l.pos+size])
				l.advance(size)
			}
		}
		return fail("Unterminated string.")
	}
	return fail(fmt.Sprintf("Unexpected character %q.", c))
}

// parser reads a document token by token.
type parser struct {
	lex *lexer
	tok token
}

// maxDepth bounds selection and value nesting, so a hostile document cannot
// exhaust the stack.
const maxDepth = 40

func parseOperation(src string) (*operation, error) {
	p := &parser{lex: &lexer{src: src, line: 1, col: 1}}
	if err := p.step(); err != nil {
		return nil, err
	}
	op := &operation{Kind: "query"}
	if p.tok.kind == 'n' && (p.tok.text == "query" || p.tok.text == "mutation" || p.tok.text == "subscription") {
		op.Kind = p.tok.text
		if op.Kind == "subscription" {
			return nil, p.errorf("Subscriptions are not supported.")
		}
		if err := p.step(); err != nil {
			return nil, err
		}
		if p.tok.kind == 'n' {
			op.Name = p.tok.text
			if err := p.step(); err != nil {
				return nil, err
			}
		}
		if p.is("(") {
			vars, err := p.varDefs()
			if err != nil {
				return nil, err
			}
			op.Vars = vars
		}
	}
	if !p.is("{") {
		return nil, p.unexpected()
	}
	sel, err := p.selectionSet(0)
	if err != nil {
		return nil, err
	}
	op.Sel = sel
	if p.tok.kind != 0 {
		if p.tok.kind == 'n' && p.tok.text == "fragment" {
			return nil, p.errorf("Fragment definitions are not supported by this fake.")
		}
		return nil, p.errorf("This fake accepts one operation per document.")
	}
	return op, nil
}

func (p *parser) step() error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) is(punct string) bool { return p.tok.kind == 'p' && p.tok.text == punct }

func (p *parser) errorf(format string, args ...any) error {
	return &syntaxError{fmt.Sprintf(format, args...), p.tok.line, p.tok.col}
}

func (p *parser) unexpected() error {
	if p.tok.kind == 0 {
		return p.errorf("Unexpected <EOF>.")
	}
	return p.errorf("Unexpected %q.", p.tok.text)
}

func (p *parser) expect(punct string) error {
	if !p.is(punct) {
		return p.errorf("Expected %q, found %s.", punct, describe(p.tok))
	}
	return p.step()
}

func describe(t token) string {
	if t.kind == 0 {
		return "<EOF>"
	}
	return strconv.Quote(t.text)
}

func (p *parser) name() (string, error) {
	if p.tok.kind != 'n' {
		return "", p.errorf("Expected Name, found %s.", describe(p.tok))
	}
	n := p.tok.text
	return n, p.step()
}

func (p *parser) varDefs() ([]varDef, error) {
	if err := p.expect("("); err != nil {
		return nil, err
	}
	var defs []varDef
	for !p.is(")") {
		if err := p.expect("$"); err != nil {
			return nil, err
		}
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		t, err := p.typeRef(0)
		if err != nil {
			return nil, err
		}
		if p.is("=") {
			return nil, p.errorf("Default values are not supported by this fake.")
		}
		defs = append(defs, varDef{n, t})
	}
	return defs, p.step()
}

func (p *parser) typeRef(depth int) (string, error) {
	if depth > maxDepth {
		return "", p.errorf("Type is nested too deeply.")
	}
	var t string
	if p.is("[") {
		if err := p.step(); err != nil {
			return "", err
		}
		inner, err := p.typeRef(depth + 1)
		if err != nil {
			return "", err
		}
		if err := p.expect("]"); err != nil {
			return "", err
		}
		t = "[" + inner + "]"
	} else {
		n, err := p.name()
		if err != nil {
			return "", err
		}
		t = n
	}
	if p.is("!") {
		t += "!"
		return t, p.step()
	}
	return t, nil
}

func (p *parser) selectionSet(depth int) ([]*selection, error) {
	if depth > maxDepth {
		return nil, p.errorf("Selection is nested too deeply.")
	}
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	var out []*selection
	for !p.is("}") {
		if p.tok.kind == 0 {
			return nil, p.unexpected()
		}
		s := &selection{Line: p.tok.line, Col: p.tok.col}
		if p.is("...") {
			if err := p.step(); err != nil {
				return nil, err
			}
			if p.tok.kind != 'n' || p.tok.text != "on" {
				return nil, p.errorf("Named fragment spreads are not supported by this fake.")
			}
			if err := p.step(); err != nil {
				return nil, err
			}
			on, err := p.name()
			if err != nil {
				return nil, err
			}
			s.On = on
			if s.Sel, err = p.selectionSet(depth + 1); err != nil {
				return nil, err
			}
			out = append(out, s)
			continue
		}
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		s.Name = n
		if p.is(":") {
			if err := p.step(); err != nil {
				return nil, err
			}
			s.Alias = n
			if s.Name, err = p.name(); err != nil {
				return nil, err
			}
		}
		if p.is("(") {
			if s.Args, err = p.arguments(depth); err != nil {
				return nil, err
			}
		}
		if p.is("@") {
			return nil, p.errorf("Directives are not supported by this fake.")
		}
		if p.is("{") {
			if s.Sel, err = p.selectionSet(depth + 1); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, p.errorf("Expected Name, found \"}\".")
	}
	return out, p.step()
}

func (p *parser) arguments(depth int) ([]argument, error) {
	if err := p.expect("("); err != nil {
		return nil, err
	}
	var args []argument
	for !p.is(")") {
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		args = append(args, argument{n, v})
	}
	return args, p.step()
}

func (p *parser) value(depth int) (value, error) {
	if depth > maxDepth {
		return value{}, p.errorf("Value is nested too deeply.")
	}
	t := p.tok
	switch {
	case p.is("$"):
		if err := p.step(); err != nil {
			return value{}, err
		}
		n, err := p.name()
		return value{Kind: kindVariable, Text: n}, err
	case t.kind == 'i':
		return value{Kind: kindInt, Text: t.text}, p.step()
	case t.kind == 'f':
		return value{Kind: kindFloat, Text: t.text}, p.step()
	case t.kind == 's':
		return value{Kind: kindString, Text: t.text}, p.step()
	case t.kind == 'n' && (t.text == "true" || t.text == "false"):
		return value{Kind: kindBool, Bool: t.text == "true"}, p.step()
	case t.kind == 'n' && t.text == "null":
		return value{Kind: kindNull}, p.step()
	case t.kind == 'n':
		return value{Kind: kindEnum, Text: t.text}, p.step()
	case p.is("["):
		if err := p.step(); err != nil {
			return value{}, err
		}
		v := value{Kind: kindList}
		for !p.is("]") {
			if p.tok.kind == 0 {
				return value{}, p.unexpected()
			}
			e, err := p.value(depth + 1)
			if err != nil {
				return value{}, err
			}
			v.List = append(v.List, e)
		}
		return v, p.step()
	case p.is("{"):
		if err := p.step(); err != nil {
			return value{}, err
		}
		v := value{Kind: kindObject}
		for !p.is("}") {
			n, err := p.name()
			if err != nil {
				return value{}, err
			}
			if err := p.expect(":"); err != nil {
				return value{}, err
			}
			e, err := p.value(depth + 1)
			if err != nil {
				return value{}, err
			}
			v.Fields = append(v.Fields, argument{n, e})
		}
		return v, p.step()
	}
	return value{}, p.unexpected()
}
