package shellpolicy

import (
	"encoding/json"
	"fmt"

	"github.com/workbench-dev/workbench/failure"
)

// Rule names one refusal of the policy table.
type Rule string

// The rules. Each refusal carries exactly one; Rules describes them.
const (
	RuleUnknownCommand        Rule = "unknown-command"
	RuleNotAvailable          Rule = "not-available"
	RuleDynamicCommand        Rule = "dynamic-command"
	RuleCommandName           Rule = "command-name"
	RuleCommandPath           Rule = "command-path"
	RuleEval                  Rule = "eval"
	RuleSource                Rule = "source"
	RuleExec                  Rule = "exec"
	RuleTrap                  Rule = "trap"
	RuleBuiltinBypass         Rule = "builtin-bypass"
	RuleIndirection           Rule = "indirection"
	RuleFindExec              Rule = "find-exec"
	RuleNestedShell           Rule = "nested-shell"
	RuleJobControl            Rule = "job-control"
	RuleHostLookup            Rule = "host-lookup"
	RuleAlias                 Rule = "alias"
	RuleFunction              Rule = "function"
	RuleProcessSubstitution   Rule = "process-substitution"
	RuleExtglob               Rule = "extglob"
	RuleIndirectExpansion     Rule = "indirect-expansion"
	RuleProtectedVariable     Rule = "protected-variable"
	RuleNameref               Rule = "nameref"
	RuleDynamicName           Rule = "dynamic-name"
	RuleRedirectOperator      Rule = "redirect-operator"
	RulePathOutsideWorkspace  Rule = "path-outside-workspace"
	RuleSelect                Rule = "select"
	RuleComputerUseCommand    Rule = "computer-use-command"
	RuleComputerUsePath       Rule = "computer-use-path"
	RuleUnrecognised          Rule = "unrecognised"
	RuleCommandTooLong        Rule = "command-too-long"
	RuleSyntax                Rule = "syntax"
	RuleArithmeticSideEffects Rule = "arithmetic-side-effect"
)

// RuleSpec documents one rule: the code its refusals carry and what it
// refuses.
type RuleSpec struct {
	Rule    Rule
	Code    failure.Code
	Refuses string
}

// Rules is the policy table of refusals, in the order docs/exec.md lists
// them.
var Rules = []RuleSpec{
	{RuleSyntax, failure.InvalidArguments, "a line that does not parse as bash"},
	{RuleCommandTooLong, failure.LimitExceeded, "a line longer than MaxCommandBytes"},
	{RuleUnknownCommand, failure.CommandNotAllowed, "a command name that is not in the command table (curl, python3, ...)"},
	{RuleNotAvailable, failure.CommandNotAllowed, "a tool of the table whose runner is not installed on this server"},
	{RuleDynamicCommand, failure.CommandNotAllowed, "a command name built at run time: `$x args`, `$(echo rm) x`"},
	{RuleCommandName, failure.CommandNotAllowed, "a command name that is quoted, escaped, globbed or braced (`'cat'`, `c\\at`, `ca?`, `{rm,x}`)"},
	{RuleCommandPath, failure.CommandNotAllowed, "a command name with a slash (`./run.sh`, `/bin/cat`)"},
	{RuleEval, failure.CommandNotAllowed, "`eval`: runs text the checker never saw"},
	{RuleSource, failure.CommandNotAllowed, "`source` and `.`: run a file the checker never saw"},
	{RuleExec, failure.CommandNotAllowed, "`exec`: replaces the shell or rewires its descriptors"},
	{RuleTrap, failure.CommandNotAllowed, "`trap`: runs text the checker never saw on a signal or exit"},
	{RuleBuiltinBypass, failure.CommandNotAllowed, "`command`, `builtin`, `enable`: choose what a name runs"},
	{RuleIndirection, failure.CommandNotAllowed, "commands that run their arguments as a command: `env`, `nice`, `nohup`, `timeout`, `xargs`, `stdbuf`, `setsid`, `sudo`, `chroot`, `watch`, ..."},
	{RuleFindExec, failure.CommandNotAllowed, "`find` with `-exec`, `-execdir`, `-ok`, `-okdir`, `-delete` or `-fprint*`"},
	{RuleNestedShell, failure.CommandNotAllowed, "another shell or interpreter: `bash -c`, `sh`, `zsh`, `busybox`, ..."},
	{RuleJobControl, failure.CommandNotAllowed, "`&`, `coproc` and job control (`wait`, `kill`, `jobs`, `fg`, `bg`, `disown`)"},
	{RuleHostLookup, failure.CommandNotAllowed, "builtins that look at the host rather than the workspace: `type`, `hash`, `which`, `pwd -P`, `ulimit`, `umask`, `times`"},
	{RuleAlias, failure.CommandNotAllowed, "`alias`, `unalias`, `shopt`: change what later words mean"},
	{RuleFunction, failure.CommandNotAllowed, "function definitions: they can shadow checked names"},
	{RuleProcessSubstitution, failure.CommandNotAllowed, "`<(...)` and `>(...)`: need FIFOs on the host outside the workspace"},
	{RuleExtglob, failure.CommandNotAllowed, "extended globs `@(...)`, `!(...)`, ..."},
	{RuleIndirectExpansion, failure.CommandNotAllowed, "`${!name}` and `${!prefix*}`: read a variable chosen at run time"},
	{RuleProtectedVariable, failure.CommandNotAllowed, "assigning, reading into, exporting or unsetting PATH, IFS, HOME, PWD, OLDPWD, CDPATH, ENV, TMPDIR, SHELL, SHELLOPTS, BASHOPTS, GLOBIGNORE, PS4, PROMPT_COMMAND or any LD_*, DYLD_*, BASH_* variable"},
	{RuleArithmeticSideEffects, failure.CommandNotAllowed, "arithmetic that assigns a protected variable (`$((IFS=1))`, `((PATH++))`); assignments to ordinary variables are allowed, because the interpreter never evaluates a variable's value as code"},
	{RuleNameref, failure.CommandNotAllowed, "`declare -n`, `nameref`: a variable that aliases another"},
	{RuleDynamicName, failure.CommandNotAllowed, "a variable name built at run time (`read $v`, `export $v`, `unset $v`, `printf -v $v`), or a `declare`/`export`/`local`/`readonly` flag outside -a -A -i -r -x -g -l -u -p"},
	{RuleRedirectOperator, failure.CommandNotAllowed, "`<>`, `{var}>`, and `>&`/`<&` to anything but 0, 1, 2 or `-`"},
	{RulePathOutsideWorkspace, failure.CommandNotAllowed, "a redirection target that is absolute (except /dev/null) or climbs with `..`"},
	{RuleSelect, failure.CommandNotAllowed, "`select`: an interactive menu"},
	{RuleComputerUseCommand, failure.NeedsComputerUse, "macOS and desktop tools: `open`, `osascript`, `pbcopy`, `pbpaste`, `screencapture`, `xcodebuild`, `defaults`, `xdg-open`, ..."},
	{RuleComputerUsePath, failure.NeedsComputerUse, "the user's own files: words starting with `~`, `/Users/`, `/Applications/`, `/Library/`, `/System/`, `/Volumes/`, `/home/`"},
	{RuleUnrecognised, failure.CommandNotAllowed, "any node the checker does not know (zsh and mksh forms, test declarations, ...)"},
}

// specs indexes Rules.
var specs = func() map[Rule]RuleSpec {
	m := make(map[Rule]RuleSpec, len(Rules))
	for _, s := range Rules {
		m[s.Rule] = s
	}
	return m
}()

// Refusal is the policy's answer to a line it will not run: the rule, the
// node that broke it (a command name, "$(...)", a redirection), the
// substitution it sits in, and its position.
type Refusal struct {
	Rule Rule
	// Node is what the rule refused, as written or as its kind.
	Node string
	// In is the innermost substitution or here-doc holding the node
	// ("$(...)", "`...`", "here-doc"); empty at the top level.
	In string
	// Line and Column are 1-based; zero when the refusal is of the whole line.
	Line, Column uint
	// Reason says why, for the agent.
	Reason string
}

// Code returns the failure code of the refusal's rule.
func (r *Refusal) Code() failure.Code { return specs[r.Rule].Code }

// Error returns "CODE: node [in $(...)] at line:col: reason (rule R)".
func (r *Refusal) Error() string { return string(r.Code()) + ": " + r.message() }

func (r *Refusal) message() string {
	msg := r.Node
	if r.In != "" {
		msg += " in " + r.In
	}
	if r.Line > 0 {
		msg += fmt.Sprintf(" at %d:%d", r.Line, r.Column)
	}
	return msg + ": " + r.Reason + " (rule " + string(r.Rule) + ")"
}

// Failure returns the refusal as a coded tool error whose details carry
// the rule, node and position.
func (r *Refusal) Failure() *failure.Error {
	details, _ := json.Marshal(struct {
		Rule   Rule   `json:"rule"`
		Node   string `json:"node"`
		In     string `json:"in,omitempty"`
		Line   uint   `json:"line,omitempty"`
		Column uint   `json:"column,omitempty"`
	}{r.Rule, r.Node, r.In, r.Line, r.Column})
	return &failure.Error{Code: r.Code(), Message: r.message(), Details: details, Cause: r}
}
