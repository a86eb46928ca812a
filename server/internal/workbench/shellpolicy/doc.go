// Package shellpolicy decides whether a shell line may run in a workbench
// workspace. Check parses the line as bash with mvdan.cc/sh/v3/syntax and
// walks the whole tree (substitutions, here-docs, arithmetic and test
// expressions included) before anything runs: every node kind is allowed or
// refused by an explicit rule, every command name must be a plain word found
// in the command table, and anything the checker does not recognise is
// refused. A refusal names the node, the rule and the position.
//
// The package only reads syntax trees: it runs nothing and touches no file.
// Paths that cannot be judged from the text (an argument, a redirection
// target built from a variable) are confined at run time by the workspace's
// os.Root, not here. The rule table is documented in docs/exec.md, and a
// test keeps the two in step.
package shellpolicy
