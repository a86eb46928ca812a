// Package workbench is the built-in `workbench` integration: per-plan
// workspaces where an agent writes, reads, lists and deletes files and runs
// checked shell lines (docs/exec.md). It implements toolcall.Caller over
// package workspace (the files, through os.Root, with quotas and idle
// release) and package shellpolicy (what a line may run), and runs lines
// through mvdan.cc/sh's interpreter with every file handler on the
// workspace and no host binary. It imports no sibling service.
package workbench
