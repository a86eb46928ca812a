package shellpolicy

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// MaxCommandBytes caps a command line; longer content belongs in a file
// written with workbench_write_file.
const MaxCommandBytes = 64 << 10

// Policy is the shell policy for one set of available tools. It is
// immutable and safe for concurrent use.
type Policy struct {
	tools map[string]bool
}

// New returns the policy under which the table's tools named in tools (the
// ones a runner provides) may run, beside the builtins. Names outside the
// table are ignored: the table, not the runner, decides what is allowed.
func New(tools []string) *Policy {
	p := &Policy{tools: map[string]bool{}}
	for _, t := range tools {
		if c, ok := commands[t]; ok && c.kind == Tool {
			p.tools[t] = true
		}
	}
	return p
}

// Allows reports whether the command name may run: a builtin of the
// table, or a tool of the table this policy was built with. The shell
// layer asks again for every command it is about to run, after expansion.
func (p *Policy) Allows(name string) bool {
	c, ok := commands[name]
	return ok && (c.kind == Builtin || p.tools[name])
}

// Check parses line as bash and checks its whole tree. It returns the tree
// when every node is allowed, and otherwise a *Refusal naming the first
// node refused in source order.
func (p *Policy) Check(line string) (*syntax.File, error) {
	if len(line) > MaxCommandBytes {
		return nil, &Refusal{Rule: RuleCommandTooLong, Node: "command",
			Reason: fmt.Sprintf("the command is %d bytes, over the limit of %d (MaxCommandBytes); write long content to a file first", len(line), MaxCommandBytes)}
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		r := &Refusal{Rule: RuleSyntax, Node: "command", Reason: err.Error()}
		var pe syntax.ParseError
		if errors.As(err, &pe) {
			r.Line, r.Column, r.Reason = pe.Pos.Line(), pe.Pos.Col(), pe.Text
		}
		return nil, r
	}
	c := &checker{policy: p}
	if r := c.stmts(f.Stmts); r != nil {
		return nil, r
	}
	return f, nil
}

// checker walks one tree. in is the innermost substitution being walked.
type checker struct {
	policy *Policy
	in     string
}

func (c *checker) refuse(rule Rule, at syntax.Node, node, reason string) *Refusal {
	r := &Refusal{Rule: rule, Node: node, In: c.in, Reason: reason}
	if at != nil && at.Pos().IsValid() {
		r.Line, r.Column = at.Pos().Line(), at.Pos().Col()
	}
	return r
}

// nested walks stmts as the body of a substitution or here-doc named in.
func (c *checker) nested(in string, walk func() *Refusal) *Refusal {
	outer := c.in
	c.in = in
	defer func() { c.in = outer }()
	return walk()
}

func (c *checker) stmts(stmts []*syntax.Stmt) *Refusal {
	for _, s := range stmts {
		if r := c.stmt(s); r != nil {
			return r
		}
	}
	return nil
}

func (c *checker) stmt(s *syntax.Stmt) *Refusal {
	if s.Background || s.Coprocess || s.Disown {
		return c.refuse(RuleJobControl, s, "&", "commands run in the foreground only")
	}
	if s.Cmd != nil {
		if r := c.command(s.Cmd); r != nil {
			return r
		}
	}
	for _, rd := range s.Redirs {
		if r := c.redirect(rd); r != nil {
			return r
		}
	}
	return nil
}

func (c *checker) command(cmd syntax.Command) *Refusal {
	switch x := cmd.(type) {
	case *syntax.CallExpr:
		return c.call(x)
	case *syntax.BinaryCmd:
		// &&, ||, | and |& are the only operators the parser builds.
		if r := c.stmt(x.X); r != nil {
			return r
		}
		return c.stmt(x.Y)
	case *syntax.Block:
		return c.stmts(x.Stmts)
	case *syntax.Subshell:
		return c.stmts(x.Stmts)
	case *syntax.IfClause:
		for ; x != nil; x = x.Else {
			if r := c.stmts(x.Cond); r != nil {
				return r
			}
			if r := c.stmts(x.Then); r != nil {
				return r
			}
		}
		return nil
	case *syntax.WhileClause:
		if r := c.stmts(x.Cond); r != nil {
			return r
		}
		return c.stmts(x.Do)
	case *syntax.ForClause:
		return c.forClause(x)
	case *syntax.CaseClause:
		if r := c.word(x.Word); r != nil {
			return r
		}
		for _, item := range x.Items {
			if r := c.words(item.Patterns); r != nil {
				return r
			}
			if r := c.stmts(item.Stmts); r != nil {
				return r
			}
		}
		return nil
	case *syntax.ArithmCmd:
		return c.arith(x.X)
	case *syntax.LetClause:
		for _, e := range x.Exprs {
			if r := c.arith(e); r != nil {
				return r
			}
		}
		return nil
	case *syntax.TestClause:
		return c.test(x.X)
	case *syntax.DeclClause:
		return c.decl(x)
	case *syntax.TimeClause:
		if x.Stmt == nil {
			return nil
		}
		return c.stmt(x.Stmt)
	case *syntax.FuncDecl:
		node := "function"
		if x.Name != nil {
			node += " " + x.Name.Value
		}
		return c.refuse(RuleFunction, x, node, "functions can shadow checked names; write the steps out")
	case *syntax.CoprocClause:
		return c.refuse(RuleJobControl, x, "coproc", "commands run in the foreground only")
	default:
		return c.refuse(RuleUnrecognised, cmd, fmt.Sprintf("%T", cmd), "the policy does not know this construct")
	}
}

func (c *checker) forClause(x *syntax.ForClause) *Refusal {
	if x.Select {
		return c.refuse(RuleSelect, x, "select", "there is no terminal to choose from")
	}
	switch loop := x.Loop.(type) {
	case *syntax.WordIter:
		if r := c.varName(loop.Name, loop.Name.Value); r != nil {
			return r
		}
		if r := c.words(loop.Items); r != nil {
			return r
		}
	case *syntax.CStyleLoop:
		for _, e := range []syntax.ArithmExpr{loop.Init, loop.Cond, loop.Post} {
			if e == nil {
				continue
			}
			if r := c.arith(e); r != nil {
				return r
			}
		}
	default:
		return c.refuse(RuleUnrecognised, x, fmt.Sprintf("%T", x.Loop), "the policy does not know this loop")
	}
	return c.stmts(x.Do)
}

// plainName is what a command name must look like.
var plainName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.+-]*$`)

func (c *checker) call(x *syntax.CallExpr) *Refusal {
	for _, a := range x.Assigns {
		if r := c.assign(a); r != nil {
			return r
		}
	}
	if len(x.Args) == 0 {
		return nil
	}
	nameWord := x.Args[0]
	name, static := staticText(nameWord)
	if !static && expands(nameWord) {
		return c.refuse(RuleDynamicCommand, nameWord, wordText(nameWord), "the command name must be written out, not built at run time")
	}
	if strings.Contains(name, "/") {
		if r := c.computerUsePath(nameWord); r != nil {
			return r
		}
		return c.refuse(RuleCommandPath, nameWord, name, "commands are named, not run from a path; scripts and binaries of the workspace do not run")
	}
	lit, ok := nameWord.Parts[0].(*syntax.Lit)
	written := static && len(nameWord.Parts) == 1 && ok && lit.Value == name
	if rule, ok := refused[name]; written && ok {
		return c.refuse(rule, nameWord, name, refusedReason(rule))
	}
	if !written || (name != "[" && name != ":" && !plainName.MatchString(name)) {
		return c.refuse(RuleCommandName, nameWord, wordText(nameWord), "write the command name as a plain word")
	}
	cmd, ok := commands[name]
	if !ok {
		return c.refuse(RuleUnknownCommand, nameWord, name, "not in the command table (docs/exec.md)")
	}
	if cmd.args != nil {
		if r := cmd.args(c, name, x.Args[1:]); r != nil {
			return r
		}
	}
	if cmd.kind == Tool && !c.policy.tools[name] {
		return c.refuse(RuleNotAvailable, nameWord, name, "this server has no runner for it yet")
	}
	return c.words(x.Args)
}

func refusedReason(rule Rule) string {
	switch rule {
	case RuleComputerUseCommand:
		return "it needs the user's own computer (a desktop or macOS tool); hand this step to the user"
	case RuleIndirection:
		return "it runs its arguments as a command the checker cannot see; run the command directly"
	case RuleNestedShell:
		return "another shell would run text the checker never saw; write the commands directly"
	default:
		return specs[rule].Refuses
	}
}

// protected reports whether assigning name could change how commands are
// found, how words split or where files go.
func protected(name string) bool {
	switch name {
	case "PATH", "IFS", "HOME", "PWD", "OLDPWD", "CDPATH", "ENV", "TMPDIR", "SHELL", "SHELLOPTS", "BASHOPTS",
		"GLOBIGNORE", "PS4", "PROMPT_COMMAND":
		return true
	}
	return strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_") || strings.HasPrefix(name, "BASH_")
}

func (c *checker) varName(at syntax.Node, name string) *Refusal {
	if protected(name) {
		return c.refuse(RuleProtectedVariable, at, name, "this variable is fixed by the workbench")
	}
	return nil
}

// varNameWord checks a word that names a variable at run time (read,
// unset, printf -v): it must be static and not protected. An array
// subscript is checked as arithmetic by the word walk.
func (c *checker) varNameWord(w *syntax.Word) *Refusal {
	text, ok := staticText(w)
	if !ok {
		return c.refuse(RuleDynamicName, w, wordText(w), "a variable name must be written out")
	}
	name, _, _ := strings.Cut(text, "[")
	return c.varName(w, name)
}

func (c *checker) assign(a *syntax.Assign) *Refusal {
	if a.Name != nil {
		if r := c.varName(a.Name, a.Name.Value); r != nil {
			return r
		}
	}
	if a.Index != nil {
		if r := c.arith(a.Index); r != nil {
			return r
		}
	}
	if a.Value != nil {
		if r := c.word(a.Value); r != nil {
			return r
		}
	}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				if r := c.arith(e.Index); r != nil {
					return r
				}
			}
			if e.Value != nil {
				if r := c.word(e.Value); r != nil {
					return r
				}
			}
		}
	}
	return nil
}

// declFlags are the declare/export/local/readonly flags allowed.
var declFlags = regexp.MustCompile(`^[-+][aAirxglup]+$`)

func (c *checker) decl(x *syntax.DeclClause) *Refusal {
	if x.Variant.Value == "nameref" {
		return c.refuse(RuleNameref, x.Variant, "nameref", "a variable that aliases another can reach a fixed one")
	}
	for _, a := range x.Args {
		if !a.Naked || a.Name != nil {
			if r := c.assign(a); r != nil {
				return r
			}
			continue
		}
		// A naked word is a flag or a name, read at run time.
		text, ok := staticText(a.Value)
		switch {
		case ok && strings.HasPrefix(text, "-n") || ok && strings.HasPrefix(text, "+n"):
			return c.refuse(RuleNameref, a.Value, x.Variant.Value+" "+text, "a variable that aliases another can reach a fixed one")
		case ok && declFlags.MatchString(text):
		default:
			return c.refuse(RuleDynamicName, a.Value, x.Variant.Value+" "+wordText(a.Value), "write the variable names and flags out")
		}
	}
	return nil
}

func (c *checker) redirect(rd *syntax.Redirect) *Refusal {
	op := rd.Op.String()
	if rd.N != nil && !isDigits(rd.N.Value) {
		return c.refuse(RuleRedirectOperator, rd, rd.N.Value+op, "a descriptor named by a variable")
	}
	switch rd.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		if rd.Hdoc == nil {
			return nil
		}
		return c.nested("here-doc", func() *Refusal { return c.word(rd.Hdoc) })
	case syntax.WordHdoc:
		return c.word(rd.Word)
	case syntax.DplIn, syntax.DplOut:
		if text, ok := staticText(rd.Word); ok && (text == "0" || text == "1" || text == "2" || text == "-") {
			return nil
		}
		return c.refuse(RuleRedirectOperator, rd, op+wordText(rd.Word), "duplicate only descriptors 0, 1 and 2 (or close with -)")
	case syntax.RdrOut, syntax.AppOut, syntax.RdrIn, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
		if r := c.word(rd.Word); r != nil {
			return r
		}
		return c.redirectTarget(rd, op)
	default:
		return c.refuse(RuleRedirectOperator, rd, op, "this redirection is not supported")
	}
}

// redirectTarget refuses targets whose written part leaves the workspace.
// The parts built at run time are confined when the file is opened.
func (c *checker) redirectTarget(rd *syntax.Redirect, op string) *Refusal {
	prefix, full := staticText(rd.Word)
	if full && prefix == "/dev/null" {
		return nil
	}
	if r := c.computerUsePath(rd.Word); r != nil {
		return r
	}
	if strings.HasPrefix(prefix, "/") {
		return c.refuse(RulePathOutsideWorkspace, rd.Word, op+" "+wordText(rd.Word), "redirect to a path inside the workspace")
	}
	for _, part := range strings.Split(prefix, "/") {
		if part == ".." {
			return c.refuse(RulePathOutsideWorkspace, rd.Word, op+" "+wordText(rd.Word), "'..' is not allowed in a redirection target")
		}
	}
	return nil
}

// computerUsePrefixes are the starts of paths that only exist on the
// user's own computer.
var computerUsePrefixes = []string{"/Users/", "/Applications/", "/Library/", "/System/", "/Volumes/", "/home/"}

// computerUsePath refuses a word that names the user's own files: an
// unquoted leading ~ (the home directory) or a path under one of
// computerUsePrefixes.
func (c *checker) computerUsePath(w *syntax.Word) *Refusal {
	text, _ := staticText(w)
	home := false
	if len(w.Parts) == 0 {
		return nil
	}
	if lit, ok := w.Parts[0].(*syntax.Lit); ok && strings.HasPrefix(lit.Value, "~") {
		home = true
	}
	for _, p := range computerUsePrefixes {
		home = home || strings.HasPrefix(text, p)
	}
	if home {
		return c.refuse(RuleComputerUsePath, w, wordText(w), "the user's own files are not in the workspace; hand this step to the user or copy the file in")
	}
	return nil
}

func (c *checker) words(ws []*syntax.Word) *Refusal {
	for _, w := range ws {
		if r := c.word(w); r != nil {
			return r
		}
	}
	return nil
}

// word checks every part of w and refuses paths of the user's computer.
func (c *checker) word(w *syntax.Word) *Refusal {
	if w == nil {
		return nil
	}
	if r := c.computerUsePath(w); r != nil {
		return r
	}
	return c.parts(w.Parts)
}

func (c *checker) parts(parts []syntax.WordPart) *Refusal {
	for _, part := range parts {
		if r := c.part(part); r != nil {
			return r
		}
	}
	return nil
}

func (c *checker) part(part syntax.WordPart) *Refusal {
	switch x := part.(type) {
	case *syntax.Lit, *syntax.SglQuoted:
		return nil
	case *syntax.DblQuoted:
		return c.parts(x.Parts)
	case *syntax.ParamExp:
		return c.param(x)
	case *syntax.CmdSubst:
		if x.TempFile || x.ReplyVar {
			return c.refuse(RuleUnrecognised, x, "${ ...;}", "the policy does not know this construct")
		}
		in := "$(...)"
		if x.Backquotes {
			in = "`...`"
		}
		return c.nested(in, func() *Refusal { return c.stmts(x.Stmts) })
	case *syntax.ArithmExp:
		return c.arith(x.X)
	case *syntax.ProcSubst:
		return c.refuse(RuleProcessSubstitution, x, x.Op.String()+"...)", "write the output to a file in the workspace and read that")
	case *syntax.ExtGlob:
		return c.refuse(RuleExtglob, x, x.Op.String()+x.Pattern.Value+")", "use plain globs")
	default:
		return c.refuse(RuleUnrecognised, part, fmt.Sprintf("%T", part), "the policy does not know this construct")
	}
}

func (c *checker) param(x *syntax.ParamExp) *Refusal {
	name := ""
	if x.Param != nil {
		name = x.Param.Value
	}
	if x.Excl || x.Names != 0 {
		return c.refuse(RuleIndirectExpansion, x, "${!"+name+"}", "name the variable directly")
	}
	if x.Flags != nil || x.Width || x.IsSet || x.NestedParam != nil || x.Param == nil || len(x.Modifiers) > 0 ||
		x.Split != syntax.OptUnset || x.GlobSubst != syntax.OptUnset || x.RcExpand != syntax.OptUnset {
		return c.refuse(RuleUnrecognised, x, "${"+name+"...}", "the policy does not know this expansion")
	}
	if x.Index != nil {
		if r := c.arith(x.Index); r != nil {
			return r
		}
	}
	if x.Slice != nil {
		for _, e := range []syntax.ArithmExpr{x.Slice.Offset, x.Slice.Length} {
			if e == nil {
				continue
			}
			if r := c.arith(e); r != nil {
				return r
			}
		}
	}
	if x.Repl != nil {
		if r := c.word(x.Repl.Orig); r != nil {
			return r
		}
		if r := c.word(x.Repl.With); r != nil {
			return r
		}
	}
	if x.Exp != nil {
		if x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull {
			if r := c.varName(x, name); r != nil {
				return r
			}
		}
		return c.word(x.Exp.Word)
	}
	return nil
}

func (c *checker) arith(e syntax.ArithmExpr) *Refusal {
	switch x := e.(type) {
	case *syntax.Word:
		return c.word(x)
	case *syntax.BinaryArithm:
		if arithAssign(x.Op) {
			if r := c.arithTarget(x.X); r != nil {
				return r
			}
		}
		if r := c.arith(x.X); r != nil {
			return r
		}
		return c.arith(x.Y)
	case *syntax.UnaryArithm:
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			if r := c.arithTarget(x.X); r != nil {
				return r
			}
		}
		return c.arith(x.X)
	case *syntax.ParenArithm:
		return c.arith(x.X)
	default:
		return c.refuse(RuleUnrecognised, e, fmt.Sprintf("%T", e), "the policy does not know this arithmetic")
	}
}

// arithTarget checks the variable an arithmetic assignment writes.
func (c *checker) arithTarget(e syntax.ArithmExpr) *Refusal {
	w, ok := e.(*syntax.Word)
	if !ok {
		return nil // the parser only builds words here; arith walks the rest
	}
	text, _ := staticText(w)
	name, _, _ := strings.Cut(text, "[")
	if protected(name) {
		return c.refuse(RuleArithmeticSideEffects, w, name, "arithmetic may not assign a variable fixed by the workbench")
	}
	return nil
}

func arithAssign(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
		syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn,
		syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
		return true
	}
	return false
}

func (c *checker) test(e syntax.TestExpr) *Refusal {
	switch x := e.(type) {
	case *syntax.Word:
		return c.word(x)
	case *syntax.BinaryTest:
		if r := c.test(x.X); r != nil {
			return r
		}
		return c.test(x.Y)
	case *syntax.UnaryTest:
		return c.test(x.X)
	case *syntax.ParenTest:
		return c.test(x.X)
	default:
		return c.refuse(RuleUnrecognised, e, fmt.Sprintf("%T", e), "the policy does not know this test")
	}
}

// staticText returns the text of w up to its first part that expands at
// run time (a parameter, a substitution, an unescaped glob character), with
// quotes and backslashes removed, and whether that is all of w.
func staticText(w *syntax.Word) (text string, full bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if x.Value == "[" { // the test builtin, not a glob
				b.WriteString(x.Value)
				continue
			}
			for i := 0; i < len(x.Value); i++ {
				switch ch := x.Value[i]; {
				case ch == '\\' && i+1 < len(x.Value):
					i++
					b.WriteByte(x.Value[i])
				case ch == '*' || ch == '?' || ch == '[':
					return b.String(), false
				default:
					b.WriteByte(ch)
				}
			}
		case *syntax.SglQuoted:
			if x.Dollar {
				return b.String(), false
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, inner := range x.Parts {
				lit, ok := inner.(*syntax.Lit)
				if !ok {
					return b.String(), false
				}
				b.WriteString(lit.Value)
			}
		default:
			return b.String(), false
		}
	}
	return b.String(), true
}

// expands reports whether w holds a parameter, substitution or arithmetic
// expansion.
func expands(w *syntax.Word) bool {
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, inner := range x.Parts {
				if _, ok := inner.(*syntax.Lit); !ok {
					return true
				}
			}
		default:
			return true
		}
	}
	return false
}

// wordText prints w as written, for messages.
func wordText(w *syntax.Word) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, w); err != nil {
		return "word"
	}
	return b.String()
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
