package workbench

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/workbench/shellpolicy"
	"github.com/workbench-dev/workbench/server/internal/workbench/workspace"
	"github.com/workbench-dev/workbench/toolcall"
)

// Bounds of the tools.
const (
	maxRead        = 256 << 10 // bytes workbench_read_file returns at most
	maxList        = 100       // entries per workbench_list page
	maxOutput      = 256 << 10 // bytes of stdout and of stderr kept per command
	defaultTimeout = 30 * time.Second
	maxTimeout     = 300 * time.Second
)

// Options configure a Service.
type Options struct {
	// Root is the directory that holds the workspaces (WORKBENCH_ROOT).
	Root string
	// Limits bound the workspaces; zero fields mean the defaults.
	Limits workspace.Limits
	// Logger records internal failures; nil discards.
	Logger *slog.Logger
}

// Service runs the workbench tools. Run sweeps idle workspaces; Close
// closes the root.
type Service struct {
	set    *workspace.Set
	shell  *shell
	logger *slog.Logger
}

var _ toolcall.Caller = (*Service)(nil)

// New opens the workspace root.
func New(opts Options) (*Service, error) {
	set, err := workspace.Open(opts.Root, opts.Limits)
	if err != nil {
		return nil, err
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{set: set, shell: &shell{policy: shellpolicy.New(nil)}, logger: logger}, nil
}

// Run sweeps idle workspaces until ctx ends.
func (s *Service) Run(ctx context.Context) { s.set.Run(ctx) }

// Close closes the workspace root.
func (s *Service) Close() error { return s.set.Close() }

// Call runs one of the workbench tools for c.UserID. Every failure is a
// *failure.Error.
func (s *Service) Call(ctx context.Context, c toolcall.Call) (json.RawMessage, error) {
	if c.UserID == "" {
		return nil, failure.Errorf(failure.InvalidArguments, "the call has no user")
	}
	out, err := s.dispatch(ctx, c)
	if err != nil {
		var fe *failure.Error
		if errors.As(err, &fe) {
			return nil, fe
		}
		s.logger.Error("workbench tool failed", "tool", c.Tool, "user", c.UserID, "err", err)
		return nil, failure.Errorf(failure.ToolError, "%s failed inside Workbench; try again", c.Tool)
	}
	data, err := json.Marshal(out)
	if err != nil {
		return nil, failure.Errorf(failure.ToolError, "encoding the result: %v", err)
	}
	return data, nil
}

func (s *Service) dispatch(ctx context.Context, c toolcall.Call) (any, error) {
	switch c.Tool {
	case ToolWriteFile:
		return withInput(c, func(in writeInput) (any, error) { return s.writeFile(ctx, c.UserID, in) })
	case ToolReadFile:
		return withInput(c, func(in readInput) (any, error) { return s.readFile(ctx, c.UserID, in) })
	case ToolList:
		return withInput(c, func(in listInput) (any, error) { return s.list(ctx, c.UserID, in) })
	case ToolDelete:
		return withInput(c, func(in pathInput) (any, error) { return s.delete(ctx, c.UserID, in) })
	case ToolExec:
		return withInput(c, func(in execInput) (any, error) { return s.exec(ctx, c.UserID, in) })
	case ToolRelease:
		return withInput(c, func(in planInput) (any, error) { return s.release(c.UserID, in) })
	default:
		return nil, failure.Errorf(failure.UnknownTool, "workbench has no tool %q", c.Tool)
	}
}

// withInput decodes the call's arguments strictly into In and runs fn.
func withInput[In any](c toolcall.Call, fn func(In) (any, error)) (any, error) {
	var in In
	input := c.Input
	if len(bytes.TrimSpace(input)) == 0 {
		input = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, failure.Errorf(failure.InvalidArguments, "arguments: %v", err)
	}
	return fn(in)
}

type planInput struct {
	Plan string `json:"plan"`
}

func (p planInput) plan() string {
	if p.Plan == "" {
		return workspace.DefaultPlan
	}
	return p.Plan
}

type pathInput struct {
	planInput
	Path string `json:"path"`
}

type writeInput struct {
	pathInput
	Content  string `json:"content"`
	Encoding string `json:"encoding"`
}

type writeOutput struct {
	Path string `json:"path"`
	Size int    `json:"size"`
}

func (s *Service) writeFile(ctx context.Context, user string, in writeInput) (*writeOutput, error) {
	data := []byte(in.Content)
	switch in.Encoding {
	case "", "utf-8":
	case "base64":
		var err error
		if data, err = base64.StdEncoding.DecodeString(in.Content); err != nil {
			return nil, failure.Errorf(failure.InvalidArguments, "content is not base64: %v", err)
		}
	default:
		return nil, failure.Errorf(failure.InvalidArguments, "encoding %q: use utf-8 or base64", in.Encoding)
	}
	err := s.set.Use(ctx, user, in.plan(), true, func(_ context.Context, w *workspace.Workspace) error {
		return w.WriteFile(in.Path, data)
	})
	if err != nil {
		return nil, err
	}
	return &writeOutput{Path: in.Path, Size: len(data)}, nil
}

type readInput struct {
	pathInput
	Offset int64 `json:"offset"`
	Limit  int64 `json:"limit"`
	Base64 bool  `json:"base64"`
}

type readOutput struct {
	Path          string `json:"path"`
	Size          int64  `json:"size"`
	Offset        int64  `json:"offset"`
	Binary        bool   `json:"binary"`
	ContentType   string `json:"content_type,omitempty"`
	Content       string `json:"content,omitempty"`
	ContentBase64 string `json:"content_base64,omitempty"`
	Truncated     bool   `json:"truncated"`
	NextOffset    int64  `json:"next_offset,omitempty"`
}

func (s *Service) readFile(ctx context.Context, user string, in readInput) (*readOutput, error) {
	if in.Offset < 0 || in.Limit < 0 {
		return nil, failure.Errorf(failure.InvalidArguments, "offset and limit may not be negative")
	}
	limit := in.Limit
	if limit == 0 || limit > maxRead {
		limit = maxRead
	}
	var data []byte
	var size int64
	err := s.set.Use(ctx, user, in.plan(), false, func(_ context.Context, w *workspace.Workspace) error {
		var err error
		data, size, err = w.ReadAt(in.Path, in.Offset, limit)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &readOutput{Path: in.Path, Size: size, Offset: in.Offset}
	if end := in.Offset + int64(len(data)); end < size {
		out.Truncated, out.NextOffset = true, end
	}
	// A cut in the middle of a UTF-8 sequence is still text.
	text := bytes.IndexByte(data, 0) < 0 && utf8.Valid(trimPartialRune(data))
	switch {
	case text:
		out.Content = string(data)
	case in.Base64:
		out.Binary, out.ContentBase64 = true, base64.StdEncoding.EncodeToString(data)
	default:
		out.Binary, out.ContentType = true, http.DetectContentType(data)
	}
	return out, nil
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

type listInput struct {
	planInput
	Path   string `json:"path"`
	Query  string `json:"query"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

type listEntry struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size int64  `json:"size"`
}

type listOutput struct {
	Entries    []listEntry `json:"entries"`
	Total      int         `json:"total"`
	Offset     int         `json:"offset"`
	Limit      int         `json:"limit"`
	NextOffset int         `json:"next_offset,omitempty"`
	Truncated  bool        `json:"truncated"`
}

func (s *Service) list(ctx context.Context, user string, in listInput) (*listOutput, error) {
	if in.Offset < 0 {
		return nil, failure.Errorf(failure.InvalidArguments, "offset may not be negative")
	}
	limit := min(max(in.Limit, 1), maxList)
	if in.Limit == 0 {
		limit = maxList
	}
	out := &listOutput{Entries: []listEntry{}, Offset: in.Offset, Limit: limit}
	err := s.set.Use(ctx, user, in.plan(), false, func(_ context.Context, w *workspace.Workspace) error {
		entries, err := w.ReadDir(in.Path)
		if err != nil {
			return err
		}
		kept := entries[:0]
		for _, e := range entries {
			if strings.Contains(e.Name(), in.Query) {
				kept = append(kept, e)
			}
		}
		out.Total = len(kept)
		for _, e := range kept[min(in.Offset, len(kept)):min(in.Offset+limit, len(kept))] {
			entry := listEntry{Name: e.Name(), Type: "other"}
			switch {
			case e.Type().IsRegular():
				entry.Type = "file"
				if info, err := e.Info(); err == nil {
					entry.Size = info.Size()
				}
			case e.IsDir():
				entry.Type = "dir"
			case e.Type()&fs.ModeSymlink != 0:
				entry.Type = "link"
			}
			out.Entries = append(out.Entries, entry)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if end := in.Offset + len(out.Entries); end < out.Total {
		out.Truncated, out.NextOffset = true, end
	}
	return out, nil
}

type deleteOutput struct {
	Path    string `json:"path"`
	Deleted bool   `json:"deleted"`
}

func (s *Service) delete(ctx context.Context, user string, in pathInput) (*deleteOutput, error) {
	err := s.set.Use(ctx, user, in.plan(), false, func(_ context.Context, w *workspace.Workspace) error {
		return w.Remove(in.Path)
	})
	if err != nil {
		return nil, err
	}
	return &deleteOutput{Path: in.Path, Deleted: true}, nil
}

type releaseOutput struct {
	Plan     string `json:"plan"`
	Released bool   `json:"released"`
}

func (s *Service) release(user string, in planInput) (*releaseOutput, error) {
	if err := s.set.Release(user, in.plan()); err != nil {
		return nil, err
	}
	return &releaseOutput{Plan: in.plan(), Released: true}, nil
}

type execInput struct {
	planInput
	Command        string  `json:"command"`
	Stdin          *string `json:"stdin"`
	TimeoutSeconds int     `json:"timeout_seconds"`
}

type execOutput struct {
	ExitCode   int    `json:"exit_code"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	Truncated  bool   `json:"truncated"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

func (s *Service) exec(ctx context.Context, user string, in execInput) (*execOutput, error) {
	timeout := defaultTimeout
	if in.TimeoutSeconds != 0 {
		if in.TimeoutSeconds < 0 || time.Duration(in.TimeoutSeconds)*time.Second > maxTimeout {
			return nil, failure.Errorf(failure.InvalidArguments, "timeout_seconds %d: use 1 to %d", in.TimeoutSeconds, int(maxTimeout.Seconds()))
		}
		timeout = time.Duration(in.TimeoutSeconds) * time.Second
	}
	file, err := s.shell.policy.Check(in.Command)
	if err != nil {
		var r *shellpolicy.Refusal
		if errors.As(err, &r) {
			return nil, r.Failure()
		}
		return nil, err
	}
	var stdin strings.Reader
	if in.Stdin != nil {
		stdin.Reset(*in.Stdin)
	}
	stdout, stderr := &capped{max: maxOutput}, &capped{max: maxOutput}
	out := &execOutput{}
	start := time.Now()
	err = s.set.Use(ctx, user, in.plan(), true, func(ctx context.Context, w *workspace.Workspace) error {
		runCtx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		_ = w.TakeRefusal() // one left by an earlier write_file is not this command's
		code, err := s.shell.run(runCtx, w, file, &stdin, stdout, stderr)
		if refused := w.TakeRefusal(); refused != nil {
			fmt.Fprintf(stderr, "workbench: a write was refused: %v\n", refused)
			code = max(code, 1)
		}
		if merr := w.Measure(); merr != nil {
			return merr
		}
		switch {
		case err == nil:
			out.ExitCode = code
		case ctx.Err() != nil:
			return failure.Errorf(failure.Canceled, "the command stopped: the plan was released or the call ended")
		case errors.Is(err, context.DeadlineExceeded):
			out.ExitCode, out.TimedOut = 124, true
			_, _ = stderr.Write([]byte("workbench: the command ran past timeout_seconds and was stopped\n"))
		default:
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.DurationMS = time.Since(start).Milliseconds()
	out.Stdout, out.Stderr = stdout.String(), stderr.String()
	out.Truncated = stdout.truncated || stderr.truncated
	return out, nil
}

// capped keeps the first max bytes written to it and notes the rest as
// truncated. The commands of a pipeline write concurrently.
type capped struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - c.buf.Len()
	if len(p) > room {
		c.truncated = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
