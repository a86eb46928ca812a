package shellpolicy_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/interp"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/workbench/shellpolicy"
)

// all is the policy with every tool of the table available.
var all = shellpolicy.New(shellpolicy.Commands(shellpolicy.Tool))

func TestPolicy_Check_refuses(t *testing.T) {
	tests := []struct {
		name, line string
		rule       shellpolicy.Rule
		// want is the start of the message: node, substitution, position.
		want string
	}{
		// Substitutions are walked: what they run is checked like the rest.
		{"curl in $(...)", "echo $(curl http://x)", shellpolicy.RuleUnknownCommand, "curl in $(...) at 1:8"},
		{"curl in backticks", "echo `curl x`", shellpolicy.RuleUnknownCommand, "curl in `...` at 1:7"},
		{"nested substitution", "echo $(echo $(wget x))", shellpolicy.RuleUnknownCommand, "wget in $(...) at 1:15"},
		{"substitution in double quotes", `echo "a $(nc -l 1) b"`, shellpolicy.RuleUnknownCommand, "nc in $(...)"},
		{"substitution in assignment", "x=$(curl y)", shellpolicy.RuleUnknownCommand, "curl in $(...)"},
		{"substitution in arithmetic", "echo $(( $(curl y) + 1 ))", shellpolicy.RuleUnknownCommand, "curl in $(...)"},
		{"substitution in array index", "a[$(curl y)]=1", shellpolicy.RuleUnknownCommand, "curl in $(...)"},
		{"substitution in parameter default", "echo ${x:-$(curl y)}", shellpolicy.RuleUnknownCommand, "curl in $(...)"},
		{"substitution in case pattern", "case a in $(curl y)) ;; esac", shellpolicy.RuleUnknownCommand, "curl in $(...)"},
		{"substitution in test clause", "[[ -n $(curl y) ]]", shellpolicy.RuleUnknownCommand, "curl in $(...)"},
		{"substitution in redirect target", "echo hi > $(curl y)", shellpolicy.RuleUnknownCommand, "curl in $(...)"},
		{"substitution in for list", "for f in $(curl y); do echo $f; done", shellpolicy.RuleUnknownCommand, "curl in $(...)"},
		{"substitution in here-doc body", "cat <<EOF\n$(curl y)\nEOF", shellpolicy.RuleUnknownCommand, "curl in $(...) at 2:3"},
		{"substitution in here-string", "cat <<< $(curl y)", shellpolicy.RuleUnknownCommand, "curl in $(...)"},
		{"process substitution in", "cat <(echo hi)", shellpolicy.RuleProcessSubstitution, "<(...) at 1:5"},
		{"process substitution out", "echo hi > >(cat)", shellpolicy.RuleProcessSubstitution, ">(...)"},

		// Commands that run other commands or text the checker never saw.
		{"eval", "eval 'rm -rf /'", shellpolicy.RuleEval, "eval at 1:1"},
		{"eval in substitution", "echo $(eval x)", shellpolicy.RuleEval, "eval in $(...)"},
		{"source", "source ./x.sh", shellpolicy.RuleSource, "source at 1:1"},
		{"dot", ". ./x.sh", shellpolicy.RuleSource, ". at 1:1"},
		{"exec", "exec cat", shellpolicy.RuleExec, "exec at 1:1"},
		{"trap", "trap 'curl x' EXIT", shellpolicy.RuleTrap, "trap"},
		{"command", "command cat x", shellpolicy.RuleBuiltinBypass, "command"},
		{"builtin", "builtin echo x", shellpolicy.RuleBuiltinBypass, "builtin"},
		{"enable", "enable -n echo", shellpolicy.RuleBuiltinBypass, "enable"},
		{"env", "env cat x", shellpolicy.RuleIndirection, "env"},
		{"env assignment", "env PATH=/tmp cat", shellpolicy.RuleIndirection, "env"},
		{"nice", "nice cat x", shellpolicy.RuleIndirection, "nice"},
		{"timeout", "timeout 5 cat", shellpolicy.RuleIndirection, "timeout"},
		{"xargs", "echo x | xargs rm", shellpolicy.RuleIndirection, "xargs at 1:10"},
		{"nohup", "nohup cat", shellpolicy.RuleIndirection, "nohup"},
		{"sudo", "sudo cat /etc/shadow", shellpolicy.RuleIndirection, "sudo"},
		{"chroot", "chroot / sh", shellpolicy.RuleIndirection, "chroot"},
		{"unshare", "unshare -r sh", shellpolicy.RuleIndirection, "unshare"},
		{"find -exec", `find . -exec rm {} \;`, shellpolicy.RuleFindExec, "find -exec at 1:8"},
		{"find -execdir", "find . -name x -execdir sh {} +", shellpolicy.RuleFindExec, "find -execdir"},
		{"find -delete", "find . -delete", shellpolicy.RuleFindExec, "find -delete"},
		{"find -fprint", "find . -fprint /etc/x", shellpolicy.RuleFindExec, "find -fprint"},
		{"bash -c", "bash -c 'curl x'", shellpolicy.RuleNestedShell, "bash at 1:1"},
		{"sh -c", "sh -c id", shellpolicy.RuleNestedShell, "sh"},
		{"pipe into sh", "echo id | sh", shellpolicy.RuleNestedShell, "sh at 1:11"},
		{"busybox", "busybox wget x", shellpolicy.RuleNestedShell, "busybox"},

		// Names the checker cannot see until run time.
		{"dynamic command", "$x args", shellpolicy.RuleDynamicCommand, "$x at 1:1"},
		{"dynamic command braced", "${x} args", shellpolicy.RuleDynamicCommand, "${x}"},
		{"substituted command name", "$(echo rm) -rf x", shellpolicy.RuleDynamicCommand, "$(echo rm)"},
		{"quoted dynamic name", `"$x" y`, shellpolicy.RuleDynamicCommand, `"$x"`},
		{"partly dynamic name", "c${x}t y", shellpolicy.RuleDynamicCommand, "c${x}t"},
		{"quoted name", "'cat' x", shellpolicy.RuleCommandName, "'cat'"},
		{"double-quoted name", `"cat" x`, shellpolicy.RuleCommandName, `"cat"`},
		{"escaped name", `c\at x`, shellpolicy.RuleCommandName, `c\at`},
		{"escaped eval", `e\val x`, shellpolicy.RuleCommandName, `e\val`},
		{"globbed name", "ca? x", shellpolicy.RuleCommandName, "ca?"},
		{"braced name", "{cat,x}", shellpolicy.RuleCommandName, "{cat,x}"},
		{"ansi-c quoted name", "$'cat' x", shellpolicy.RuleCommandName, "$'cat'"},
		{"relative path", "./run.sh", shellpolicy.RuleCommandPath, "./run.sh"},
		{"absolute path", "/bin/cat x", shellpolicy.RuleCommandPath, "/bin/cat"},
		{"unknown", "curl http://x", shellpolicy.RuleUnknownCommand, "curl at 1:1"},
		{"unknown after pipe", "echo x | python3 -", shellpolicy.RuleUnknownCommand, "python3 at 1:10"},
		{"unknown in subshell", "(echo; wget x)", shellpolicy.RuleUnknownCommand, "wget"},
		{"unknown in if", "if true; then nc x; fi", shellpolicy.RuleUnknownCommand, "nc"},
		{"unknown in elif", "if false; then :; elif true; then nc x; fi", shellpolicy.RuleUnknownCommand, "nc"},
		{"unknown in while", "while nc x; do :; done", shellpolicy.RuleUnknownCommand, "nc"},
		{"unknown in time", "time nc x", shellpolicy.RuleUnknownCommand, "nc"},

		// Variables that change how commands are found or words split.
		{"PATH assignment", "PATH=/tmp cat x", shellpolicy.RuleProtectedVariable, "PATH at 1:1"},
		{"PATH alone", "PATH=/tmp", shellpolicy.RuleProtectedVariable, "PATH at 1:1"},
		{"LD_PRELOAD", "LD_PRELOAD=/x.so cat y", shellpolicy.RuleProtectedVariable, "LD_PRELOAD"},
		{"IFS", "IFS=/ ; echo $x", shellpolicy.RuleProtectedVariable, "IFS"},
		{"BASH_ENV", "BASH_ENV=x", shellpolicy.RuleProtectedVariable, "BASH_ENV"},
		{"TMPDIR", "TMPDIR=/tmp", shellpolicy.RuleProtectedVariable, "TMPDIR"},
		{"HOME", "HOME=/", shellpolicy.RuleProtectedVariable, "HOME"},
		{"export PATH", "export PATH=/tmp", shellpolicy.RuleProtectedVariable, "PATH"},
		{"export naked", "export LD_LIBRARY_PATH", shellpolicy.RuleProtectedVariable, "LD_LIBRARY_PATH"},
		{"readonly IFS", "readonly IFS", shellpolicy.RuleProtectedVariable, "IFS"},
		{"declare dynamic", "declare $x", shellpolicy.RuleDynamicName, "declare $x"},
		{"declare -n", "declare -n r=PATH", shellpolicy.RuleNameref, "declare -n"},
		{"nameref", "nameref r=PATH", shellpolicy.RuleNameref, "nameref"},
		{"read PATH", "read PATH < f", shellpolicy.RuleProtectedVariable, "PATH"},
		{"read -a IFS", "read -r -a IFS < f", shellpolicy.RuleProtectedVariable, "IFS"},
		{"read dynamic", "read $v < f", shellpolicy.RuleDynamicName, "$v"},
		{"printf -v PATH", "printf -v PATH %s /tmp", shellpolicy.RuleProtectedVariable, "PATH"},
		{"unset PATH", "unset PATH", shellpolicy.RuleProtectedVariable, "PATH"},
		{"for PATH", "for PATH in /tmp; do :; done", shellpolicy.RuleProtectedVariable, "PATH"},
		{"default assigns PATH", "echo ${PATH:=/tmp}", shellpolicy.RuleProtectedVariable, "PATH"},
		{"arithmetic assigns IFS", "echo $((IFS=1))", shellpolicy.RuleArithmeticSideEffects, "IFS"},
		{"arithmetic increments PATH", "((PATH++))", shellpolicy.RuleArithmeticSideEffects, "PATH"},
		{"let assigns LD_", "let LD_X=1", shellpolicy.RuleArithmeticSideEffects, "LD_X"},
		{"c-style loop on PATH", "for ((PATH=0; PATH<1; PATH++)); do :; done", shellpolicy.RuleArithmeticSideEffects, "PATH"},
		{"indirect expansion", "echo ${!x}", shellpolicy.RuleIndirectExpansion, "${!x}"},
		{"prefix names", "echo ${!BASH*}", shellpolicy.RuleIndirectExpansion, "${!BASH}"},

		// Redirections.
		{"redirect to /etc", "echo x > /etc/passwd", shellpolicy.RulePathOutsideWorkspace, "> /etc/passwd at 1:10"},
		{"append to /tmp", "echo x >> /tmp/x", shellpolicy.RulePathOutsideWorkspace, ">> /tmp/x"},
		{"read /etc/shadow", "cat < /etc/shadow", shellpolicy.RulePathOutsideWorkspace, "< /etc/shadow"},
		{"redirect with ..", "echo x > ../x", shellpolicy.RulePathOutsideWorkspace, "> ../x"},
		{"redirect with inner ..", "echo x > a/../../x", shellpolicy.RulePathOutsideWorkspace, "> a/../../x"},
		{"redirect all to /", "echo x &> /x", shellpolicy.RulePathOutsideWorkspace, "&> /x"},
		{"redirect quoted absolute", `echo x > "/etc/x"`, shellpolicy.RulePathOutsideWorkspace, `> "/etc/x"`},
		{"redirect absolute then variable", "echo x > /tmp/$y", shellpolicy.RulePathOutsideWorkspace, "> /tmp/$y"},
		{"here-doc writes outside", "cat <<EOF > /etc/cron.d/x\n* * * * * root id\nEOF", shellpolicy.RulePathOutsideWorkspace, "> /etc/cron.d/x"},
		{"read-write redirect", "cat <> f", shellpolicy.RuleRedirectOperator, "<>"},
		{"variable descriptor", "exec {fd}> f", shellpolicy.RuleExec, "exec"},
		{"variable descriptor on echo", "echo x {fd}> f", shellpolicy.RuleRedirectOperator, "{fd}>"},
		{"dup to file", "echo x >& f", shellpolicy.RuleRedirectOperator, ">&f"},
		{"dup to fd 9", "echo x >&9", shellpolicy.RuleRedirectOperator, ">&9"},

		// Control flow the workbench does not offer.
		{"function", "f() { cat x; }; f", shellpolicy.RuleFunction, "function f at 1:1"},
		{"function keyword", "function cat { echo; }", shellpolicy.RuleFunction, "function cat"},
		{"background", "echo x &", shellpolicy.RuleJobControl, "& at 1:1"},
		{"coproc", "coproc cat", shellpolicy.RuleJobControl, "coproc"},
		{"wait", "wait", shellpolicy.RuleJobControl, "wait"},
		{"kill", "kill -9 1", shellpolicy.RuleJobControl, "kill"},
		{"select", "select x in a b; do :; done", shellpolicy.RuleSelect, "select"},
		{"alias", "alias ls='curl x'", shellpolicy.RuleAlias, "alias"},
		{"shopt", "shopt -s expand_aliases", shellpolicy.RuleAlias, "shopt"},
		{"type", "type cat", shellpolicy.RuleHostLookup, "type"},
		{"which", "which cat", shellpolicy.RuleHostLookup, "which"},
		{"pwd -P", "pwd -P", shellpolicy.RuleHostLookup, "pwd -P"},
		{"ulimit", "ulimit -n 1", shellpolicy.RuleHostLookup, "ulimit"},
		{"extglob", "echo @(a|b)", shellpolicy.RuleExtglob, "@(a|b)"},

		// Computer use.
		{"open", "open https://x", shellpolicy.RuleComputerUseCommand, "open at 1:1"},
		{"osascript", "osascript -e 'x'", shellpolicy.RuleComputerUseCommand, "osascript"},
		{"pbcopy in pipe", "echo x | pbcopy", shellpolicy.RuleComputerUseCommand, "pbcopy"},
		{"pbpaste", "pbpaste > f", shellpolicy.RuleComputerUseCommand, "pbpaste"},
		{"xdg-open", "xdg-open x", shellpolicy.RuleComputerUseCommand, "xdg-open"},
		{"screencapture", "screencapture s.png", shellpolicy.RuleComputerUseCommand, "screencapture"},
		{"home path", "cat ~/notes.txt", shellpolicy.RuleComputerUsePath, "~/notes.txt at 1:5"},
		{"home alone", "cd ~", shellpolicy.RuleComputerUsePath, "~"},
		{"other home", "cat ~bob/x", shellpolicy.RuleComputerUsePath, "~bob/x"},
		{"tilde assignment", "x=~/a", shellpolicy.RuleComputerUsePath, "~/a"},
		{"Users path", "cat /Users/me/x", shellpolicy.RuleComputerUsePath, "/Users/me/x"},
		{"quoted Users path", "cat '/Users/me/x'", shellpolicy.RuleComputerUsePath, "'/Users/me/x'"},
		{"Applications path", "ls /Applications/", shellpolicy.RuleComputerUsePath, "/Applications/"},
		{"redirect to home", "echo x > ~/x", shellpolicy.RuleComputerUsePath, "~/x"},
		{"app binary", "/Applications/Safari.app/Contents/MacOS/Safari", shellpolicy.RuleComputerUsePath, "/Applications/"},

		// Forms of other shells.
		{"mksh temp-file substitution", "echo ${ echo x;}", shellpolicy.RuleUnrecognised, "${ ...;}"},

		// Syntax and size.
		{"syntax error", "echo (", shellpolicy.RuleSyntax, "command at 1:1"},
		{"too long", "echo " + strings.Repeat("a", shellpolicy.MaxCommandBytes), shellpolicy.RuleCommandTooLong, "command: the command is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := all.Check(tt.line)
			var r *shellpolicy.Refusal
			if !errors.As(err, &r) {
				t.Fatalf("Check(%q) = %v, want a refusal by %s", tt.line, err, tt.rule)
			}
			if r.Rule != tt.rule {
				t.Errorf("Check(%q): rule %s (%v), want %s", tt.line, r.Rule, r, tt.rule)
			}
			msg := r.Failure().Message
			if !strings.HasPrefix(msg, tt.want) {
				t.Errorf("Check(%q): message %q, want it to start with %q", tt.line, msg, tt.want)
			}
			if !strings.HasSuffix(msg, "(rule "+string(tt.rule)+")") {
				t.Errorf("Check(%q): message %q does not end by naming the rule", tt.line, msg)
			}
		})
	}
}

func TestRefusal_Failure(t *testing.T) {
	_, err := all.Check("echo $(curl x)")
	var r *shellpolicy.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("Check = %v, want a refusal", err)
	}
	fe := r.Failure()
	if fe.Error() != "COMMAND_NOT_ALLOWED: curl in $(...) at 1:8: not in the command table (docs/exec.md) (rule unknown-command)" {
		t.Errorf("Error() = %q", fe.Error())
	}
	var details struct {
		Rule, Node, In string
		Line, Column   uint
	}
	if err := json.Unmarshal(fe.Details, &details); err != nil {
		t.Fatal(err)
	}
	if details.Rule != "unknown-command" || details.Node != "curl" || details.In != "$(...)" || details.Line != 1 || details.Column != 8 {
		t.Errorf("details = %+v", details)
	}
	if !errors.Is(fe, r) {
		t.Error("the failure does not wrap the refusal")
	}
	_, err = all.Check("pbcopy")
	if !errors.As(err, &r) || r.Failure().Code != failure.NeedsComputerUse {
		t.Errorf("Check(pbcopy) = %v, want NEEDS_COMPUTER_USE", err)
	}
}

func TestPolicy_Check_allows(t *testing.T) {
	lines := []string{
		"echo hello",
		"echo hi > out.txt && cat out.txt | wc -l",
		"set -euo pipefail; echo a || echo b",
		"! false",
		"x=1; y=$((x + 2)); echo $y ${#y} ${y:-none} ${y/2/3} ${y:0:1}",
		"for f in *.txt; do wc -l \"$f\" > \"$f.count\"; done",
		"for ((i = 0; i < 3; i++)); do echo $i; done",
		"let i=1+2",
		"while read -r line; do echo \"$line\"; done < in.txt",
		"if [[ -f a.txt && $x == y* ]]; then echo yes; elif [ -d b ]; then :; else echo no; fi",
		"case $x in a|b) echo ab ;; *) echo other ;; esac",
		"{ echo a; echo b; } > both.txt 2>&1",
		"(cd sub && pwd)",
		"cat <<'EOF' > note.md\n# Title\n$(not run)\nEOF",
		"cat <<EOF\nvalue: $x\nEOF",
		"grep -c x <<< \"$(cat in.txt)\"",
		"echo `echo nested`",
		"export FOO=bar; readonly BAZ=1; declare -i n=3; echo $FOO",
		"a=(1 2 3); echo ${a[1]}",
		"echo x > /dev/null 2>&1",
		"echo data > \"$out\"",
		"time echo x",
		"unset x y",
		"printf -v msg '%s' hi; echo $msg",
		"find . -name '*.go' -type f",
		"jq -r '.items[] | .name' data.json | sort | uniq -c",
		"grep '~' file",
		"echo 'a ~ b' \"~\"",
		"echo \\~/x",
		"[ -n \"$x\" ]",
		"echo 'Users/x'",
		"exit 3",
	}
	for _, line := range lines {
		t.Run(line, func(t *testing.T) {
			if _, err := all.Check(line); err != nil {
				t.Errorf("Check(%q) = %v, want allowed", line, err)
			}
		})
	}
}

func TestPolicy_Check_toolAvailability(t *testing.T) {
	builtinsOnly := shellpolicy.New(nil)
	tests := []struct {
		policy *shellpolicy.Policy
		line   string
		rule   shellpolicy.Rule
	}{
		{builtinsOnly, "echo x", ""},
		{builtinsOnly, "cat x", shellpolicy.RuleNotAvailable},
		{builtinsOnly, "echo x | sed s/x/y/", shellpolicy.RuleNotAvailable},
		{shellpolicy.New([]string{"cat"}), "cat x", ""},
		{shellpolicy.New([]string{"cat"}), "sed x", shellpolicy.RuleNotAvailable},
		// A runner cannot add a name the table does not have.
		{shellpolicy.New([]string{"curl", "eval"}), "curl x", shellpolicy.RuleUnknownCommand},
		{shellpolicy.New([]string{"curl", "eval"}), "eval x", shellpolicy.RuleEval},
		// Argument rules apply before availability.
		{builtinsOnly, "find . -exec rm {} +", shellpolicy.RuleFindExec},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			_, err := tt.policy.Check(tt.line)
			var r *shellpolicy.Refusal
			switch {
			case tt.rule == "" && err != nil:
				t.Errorf("Check(%q) = %v, want allowed", tt.line, err)
			case tt.rule != "" && (!errors.As(err, &r) || r.Rule != tt.rule):
				t.Errorf("Check(%q) = %v, want rule %s", tt.line, err, tt.rule)
			}
		})
	}
}

// TestCommands_kinds checks that the table's builtins are the
// interpreter's builtins and its tools are not, so a name runs where the
// table says it does.
func TestCommands_kinds(t *testing.T) {
	for _, name := range shellpolicy.Commands(shellpolicy.Builtin) {
		if !interp.IsBuiltin(name) {
			t.Errorf("%s is a Builtin in the table but not an interpreter builtin", name)
		}
	}
	for _, name := range shellpolicy.Commands(shellpolicy.Tool) {
		if interp.IsBuiltin(name) {
			t.Errorf("%s is a Tool in the table but the interpreter runs it as a builtin", name)
		}
	}
}

// TestRules_documented checks that docs/exec.md lists every rule with its
// code.
func TestRules_documented(t *testing.T) {
	doc, err := os.ReadFile("../../../../docs/exec.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range shellpolicy.Rules {
		row := "| `" + string(s.Rule) + "` | `" + string(s.Code) + "` |"
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/exec.md has no row starting %q", row)
		}
	}
}

func TestPolicy_Allows(t *testing.T) {
	p := shellpolicy.New([]string{"cat"})
	for name, want := range map[string]bool{"echo": true, "[": true, "cat": true, "sed": false, "eval": false, "curl": false, "": false} {
		if got := p.Allows(name); got != want {
			t.Errorf("Allows(%q) = %v, want %v", name, got, want)
		}
	}
}
