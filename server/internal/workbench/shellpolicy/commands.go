package shellpolicy

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Kind says what runs a command of the table.
type Kind uint8

// The kinds of command.
const (
	// Builtin: the shell interpreter itself, inside the server.
	Builtin Kind = iota + 1
	// Tool: the tool layer (a WASI module, or later the native sandbox);
	// allowed only when the Policy was built with its name.
	Tool
)

// command is one entry of the command table: what runs it, and the rule
// its arguments must keep (nil: any argument).
type command struct {
	kind Kind
	args func(c *checker, name string, args []*syntax.Word) *Refusal
}

// commands is the command table: every name a line may run. Builtins are
// the interpreter's own (a test checks interp.IsBuiltin agrees); tools run
// in the tool layer when a runner provides them.
var commands = map[string]command{
	":": {kind: Builtin}, "[": {kind: Builtin}, "test": {kind: Builtin},
	"true": {kind: Builtin}, "false": {kind: Builtin},
	"echo": {kind: Builtin}, "printf": {kind: Builtin, args: printfArgs},
	"cd": {kind: Builtin}, "pwd": {kind: Builtin, args: pwdArgs},
	"break": {kind: Builtin}, "continue": {kind: Builtin}, "exit": {kind: Builtin},
	"set": {kind: Builtin}, "shift": {kind: Builtin},
	"read": {kind: Builtin, args: readArgs}, "unset": {kind: Builtin, args: unsetArgs},

	// The WASI tool layer's multi-call module (u-root and gojq).
	"base64": {kind: Tool}, "cat": {kind: Tool}, "cp": {kind: Tool}, "gzip": {kind: Tool},
	"grep": {kind: Tool}, "head": {kind: Tool}, "jq": {kind: Tool}, "md5sum": {kind: Tool},
	"mkdir": {kind: Tool}, "mv": {kind: Tool}, "rm": {kind: Tool}, "shasum": {kind: Tool},
	"sort": {kind: Tool}, "tail": {kind: Tool}, "tar": {kind: Tool}, "tee": {kind: Tool},
	"touch": {kind: Tool}, "tr": {kind: Tool}, "uniq": {kind: Tool}, "wc": {kind: Tool},
	// Tools with no WASI build, for the native sandbox.
	"awk": {kind: Tool}, "cut": {kind: Tool}, "diff": {kind: Tool}, "find": {kind: Tool, args: findArgs},
	"ls": {kind: Tool}, "sed": {kind: Tool},
}

// refused maps the names the table refuses by a rule of their own; any
// other name outside commands is RuleUnknownCommand.
var refused = func() map[string]Rule {
	m := map[string]Rule{}
	for rule, names := range map[Rule]string{
		RuleEval:          "eval",
		RuleSource:        "source .",
		RuleExec:          "exec",
		RuleTrap:          "trap",
		RuleBuiltinBypass: "command builtin enable",
		RuleIndirection: "env nice nohup timeout xargs stdbuf setsid sudo su doas runuser chroot unshare nsenter " +
			"ionice taskset chrt prlimit strace ltrace gdb watch flock parallel script expect",
		RuleNestedShell: "sh bash dash zsh ksh mksh fish csh tcsh busybox toybox",
		RuleJobControl:  "wait kill jobs fg bg disown suspend",
		RuleHostLookup:  "type hash which whereis ulimit umask times compgen history fc",
		RuleAlias:       "alias unalias shopt bind",
		RuleComputerUseCommand: "open osascript pbcopy pbpaste screencapture xcodebuild xcrun defaults xdg-open " +
			"gnome-open kde-open say afplay launchctl mdfind mdls caffeinate security sw_vers diskutil hdiutil " +
			"softwareupdate xclip xsel wl-copy wl-paste notify-send automator shortcuts networksetup scutil " +
			"system_profiler plutil tccutil",
	} {
		for _, name := range strings.Fields(names) {
			m[name] = rule
		}
	}
	return m
}()

// Commands returns the names of the command table of the given kind,
// sorted.
func Commands(kind Kind) []string {
	var names []string
	for name, c := range commands {
		if c.kind == kind {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// printfArgs checks printf's -v NAME.
func printfArgs(c *checker, _ string, args []*syntax.Word) *Refusal {
	for i := 0; i+1 < len(args); i++ {
		if flag, ok := staticText(args[i]); ok && flag == "-v" {
			return c.varNameWord(args[i+1])
		}
		if flag, ok := staticText(args[i]); !ok || !strings.HasPrefix(flag, "-") || flag == "--" {
			return nil
		}
	}
	return nil
}

// pwdArgs refuses pwd -P, which resolves the host's symlinks.
func pwdArgs(c *checker, name string, args []*syntax.Word) *Refusal {
	for _, a := range args {
		if text, ok := staticText(a); !ok || text != "-L" {
			return c.refuse(RuleHostLookup, a, name+" "+wordText(a), "only plain pwd (or pwd -L) reports the workspace's path")
		}
	}
	return nil
}

// readArgs checks the variable names read assigns: every operand, and
// the array of -a.
func readArgs(c *checker, _ string, args []*syntax.Word) *Refusal {
	takesValue := map[string]bool{"-d": true, "-n": true, "-N": true, "-p": true, "-t": true, "-u": true, "-i": true}
	for i := 0; i < len(args); i++ {
		text, ok := staticText(args[i])
		switch {
		case ok && text == "-a" && i+1 < len(args):
			i++
			if r := c.varNameWord(args[i]); r != nil {
				return r
			}
		case ok && takesValue[text]:
			i++
		case ok && strings.HasPrefix(text, "-") && text != "-":
		default:
			if r := c.varNameWord(args[i]); r != nil {
				return r
			}
		}
	}
	return nil
}

// unsetArgs checks the names unset removes.
func unsetArgs(c *checker, _ string, args []*syntax.Word) *Refusal {
	for _, a := range args {
		if text, ok := staticText(a); ok && strings.HasPrefix(text, "-") {
			continue
		}
		if r := c.varNameWord(a); r != nil {
			return r
		}
	}
	return nil
}

// findArgs refuses the find actions that run commands or write files.
func findArgs(c *checker, name string, args []*syntax.Word) *Refusal {
	for _, a := range args {
		text, ok := staticText(a)
		if !ok {
			continue
		}
		switch text {
		case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
			return c.refuse(RuleFindExec, a, name+" "+text, "find may only select and print; run the next step on its output")
		}
	}
	return nil
}
