package workbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/workbench/shellpolicy"
	"github.com/workbench-dev/workbench/server/internal/workbench/workspace"
)

// virtualDir is the working directory the interpreter sees: the workspace,
// named without revealing its host path.
const virtualDir = "/workspace"

// noTempDir is the interpreter's TMPDIR. It does not exist, so the one open
// the interpreter makes without the open handler (its own process
// substitution FIFOs, which the policy refuses anyway) can never succeed.
const noTempDir = "/nonexistent/workbench-no-tmp"

// shellEnv is the whole environment of a command: nothing of the server's.
var shellEnv = []string{
	"HOME=" + virtualDir, "PWD=" + virtualDir, "PATH=", "TMPDIR=" + noTempDir,
	"LANG=C.UTF-8", "USER=workbench", "SHELL=",
}

// shell runs checked command lines in a workspace.
type shell struct {
	policy *shellpolicy.Policy
}

// run runs file, already checked by s.policy, in w with the given
// standard streams, and returns the exit status.
func (s *shell) run(ctx context.Context, w *workspace.Workspace, file *syntax.File, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	fsys := shellFS{w: w}
	r, err := interp.New(
		interp.Env(expand.ListEnviron(shellEnv...)),
		interp.StdIO(stdin, stdout, stderr),
		interp.OpenHandler(fsys.open),
		interp.StatHandler(fsys.stat),
		interp.ReadDirHandler2(fsys.readDir),
		interp.AccessHandler(fsys.access),
		interp.CallHandler(s.call),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return s.exec }),
	)
	if err != nil {
		return 0, fmt.Errorf("shell: %w", err)
	}
	// Set directly: interp.Dir would stat the host path.
	r.Dir = virtualDir
	err = r.Run(ctx, file)
	var status interp.ExitStatus
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &status):
		return int(status), nil
	case ctx.Err() != nil:
		return 0, ctx.Err()
	default:
		fmt.Fprintf(stderr, "workbench: %v\n", err)
		return 1, nil
	}
}

// call checks, after expansion, every command about to run: the policy
// checked the written names, and this refuses any other name a run time
// path could produce.
func (s *shell) call(ctx context.Context, args []string) ([]string, error) {
	if len(args) > 0 && !s.policy.Allows(args[0]) {
		hc := interp.HandlerCtx(ctx)
		fmt.Fprintf(hc.Stderr, "workbench: %s: COMMAND_NOT_ALLOWED at run time\n", args[0])
		return nil, interp.ExitStatus(126)
	}
	return args, nil
}

// exec runs a tool of the table. No tool runner is installed yet, so no
// name reaches it; it never runs a host binary.
func (s *shell) exec(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	fmt.Fprintf(hc.Stderr, "workbench: %s: no runner for this tool\n", args[0])
	return interp.ExitStatus(127)
}

// shellFS serves the interpreter's file handlers from the workspace. The
// interpreter passes absolute paths under virtualDir; any other path is
// outside the workspace.
type shellFS struct {
	w *workspace.Workspace
}

// rel maps an interpreter path, absolute or relative to the current
// directory, to a workspace path.
func (f shellFS) rel(ctx context.Context, op, name string) (string, error) {
	clean := path.Clean(name)
	if !path.IsAbs(name) {
		clean = path.Join(interp.HandlerCtx(ctx).Dir, name)
	}
	if clean == virtualDir {
		return ".", nil
	}
	if rest, ok := strings.CutPrefix(clean, virtualDir+"/"); ok {
		return rest, nil
	}
	return "", &os.PathError{Op: op, Path: name, Err: errors.New("outside the workspace (PATH_NOT_ALLOWED)")}
}

// pathErr gives err the *os.PathError form the interpreter prints rather
// than halting on.
func pathErr(op, name string, err error) error {
	var pe *os.PathError
	if err == nil || errors.As(err, &pe) && pe.Path == name {
		return err
	}
	return &os.PathError{Op: op, Path: name, Err: err}
}

func (f shellFS) open(ctx context.Context, name string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	if name == "/dev/null" {
		return devNull{}, nil
	}
	rel, err := f.rel(ctx, "open", name)
	if err != nil {
		return nil, err
	}
	file, err := f.w.OpenFile(rel, flag, perm)
	return file, pathErr("open", name, err)
}

func (f shellFS) stat(ctx context.Context, name string, follow bool) (fs.FileInfo, error) {
	rel, err := f.rel(ctx, "stat", name)
	if err != nil {
		return nil, err
	}
	var info fs.FileInfo
	if follow {
		info, err = f.w.Stat(rel)
	} else {
		info, err = f.w.Lstat(rel)
	}
	return info, pathErr("stat", name, err)
}

// readDir lists a workspace directory. Outside the workspace, through a
// link or otherwise, there is nothing to list: a glob there matches
// nothing, as it would in an empty directory.
func (f shellFS) readDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	rel, err := f.rel(ctx, "readdir", name)
	if err != nil {
		return nil, nil
	}
	entries, err := f.w.ReadDir(rel)
	var fe *failure.Error
	if errors.As(err, &fe) && fe.Code == failure.PathNotAllowed {
		return nil, nil
	}
	return entries, pathErr("readdir", name, err)
}

// access grants read and write on what exists in the workspace, and
// execute (search) on its directories only: nothing in it is a program.
func (f shellFS) access(ctx context.Context, name string, mode interp.AccessMode) error {
	info, err := f.stat(ctx, name, true)
	if err != nil {
		return err
	}
	if mode&interp.AccessExec != 0 && !info.IsDir() {
		return &os.PathError{Op: "access", Path: name, Err: fs.ErrPermission}
	}
	return nil
}

// devNull is /dev/null without the host's device.
type devNull struct{}

func (devNull) Read([]byte) (int, error)    { return 0, io.EOF }
func (devNull) Write(b []byte) (int, error) { return len(b), nil }
func (devNull) Close() error                { return nil }
