package workbench

import (
	"encoding/json"
	"fmt"

	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/workbench/workspace"
)

// Integration is the name of the built-in integration.
const Integration = "workbench"

// Tool slugs.
const (
	ToolWriteFile = "workbench_write_file"
	ToolReadFile  = "workbench_read_file"
	ToolList      = "workbench_list"
	ToolDelete    = "workbench_delete"
	ToolExec      = "workbench_exec"
	ToolRelease   = "workbench_release"
)

const planSchema = `"plan":{"type":"string","pattern":"^[a-z0-9][a-z0-9-]{0,62}$","default":"default","description":"The workspace: a name you choose (a-z, 0-9, '-'), one per task. Default 'default'."}`

const pathSchema = `"path":{"type":"string","minLength":1,"maxLength":4096,"description":"A path relative to the workspace; no '..', no leading '/'."}`

// Manifest returns the built-in integration's manifest; limits are quoted
// in the descriptions.
func Manifest(lim workspace.Limits) *manifest.Manifest {
	lim = lim.WithDefaults()
	limits := fmt.Sprintf("%d MiB and %d entries per workspace, %d workspaces per user; a workspace unused for %v is deleted",
		lim.MaxBytes>>20, lim.MaxFiles, lim.MaxPlans, lim.Idle)
	return &manifest.Manifest{
		ABI:         1,
		Name:        Integration,
		Version:     "0.1.0",
		Title:       "Workbench",
		Description: "A private scratch workspace per plan: write, read, list and delete files, and run checked shell lines over them. Limits: " + limits + ".",
		Categories:  []string{"developer-tools"},
		Auth:        manifest.Auth{Mode: manifest.ModeNone},
		Tools: []manifest.Tool{
			{
				Slug:        ToolWriteFile,
				Title:       "Write a file",
				Description: "Creates or replaces a file in the workspace, creating its directories (and the workspace). Limits: " + limits + ".",
				InputSchema: raw(`{"type":"object","properties":{` + planSchema + `,` + pathSchema + `,
  "content":{"type":"string","description":"The file's content: UTF-8 text, or base64 with encoding 'base64'."},
  "encoding":{"type":"string","enum":["utf-8","base64"],"description":"Default utf-8."}},
  "required":["path","content"],"additionalProperties":false}`),
				OutputSchema: raw(`{"type":"object","properties":{"path":{"type":"string"},"size":{"type":"integer"}},"required":["path","size"]}`),
				Annotations:  manifest.Annotations{Destructive: true, Idempotent: true},
			},
			{
				Slug:  ToolReadFile,
				Title: "Read a file",
				Description: fmt.Sprintf("Reads a file of the workspace from offset, up to limit bytes (default and maximum %d). Text comes back as content; "+
					"a binary file comes back as its size and type only, unless base64 is true. truncated and next_offset say there is more.", maxRead),
				InputSchema: raw(`{"type":"object","properties":{` + planSchema + `,` + pathSchema + `,
  "offset":{"type":"integer","minimum":0,"description":"Byte offset to start at. Default 0."},
  "limit":{"type":"integer","minimum":1,"description":"Bytes to read at most."},
  "base64":{"type":"boolean","description":"Return a binary file's bytes as base64."}},
  "required":["path"],"additionalProperties":false}`),
				OutputSchema: raw(`{"type":"object","properties":{"path":{"type":"string"},"size":{"type":"integer"},"offset":{"type":"integer"},
  "binary":{"type":"boolean"},"content_type":{"type":"string"},"content":{"type":"string"},"content_base64":{"type":"string"},
  "truncated":{"type":"boolean"},"next_offset":{"type":"integer"}},"required":["path","size","offset","binary","truncated"]}`),
				Annotations: manifest.Annotations{ReadOnly: true, Idempotent: true},
			},
			{
				Slug:  ToolList,
				Title: "List files",
				Description: fmt.Sprintf("Lists a directory of the workspace (default its top), sorted by name, paged: limit 1 to %d (default %d), "+
					"total, next_offset and truncated. query keeps the names containing it.", maxList, maxList),
				InputSchema: raw(`{"type":"object","properties":{` + planSchema + `,
  "path":{"type":"string","maxLength":4096,"description":"A directory relative to the workspace. Default the workspace."},
  "query":{"type":"string","maxLength":256,"description":"Keep the names that contain this text."},
  "offset":{"type":"integer","minimum":0},"limit":{"type":"integer"}},"additionalProperties":false}`),
				OutputSchema: raw(`{"type":"object","properties":{"entries":{"type":"array","items":{"type":"object","properties":{
    "name":{"type":"string"},"type":{"type":"string","enum":["file","dir","link","other"]},"size":{"type":"integer"}},"required":["name","type","size"]}},
  "total":{"type":"integer"},"offset":{"type":"integer"},"limit":{"type":"integer"},"next_offset":{"type":"integer"},"truncated":{"type":"boolean"}},
  "required":["entries","total","offset","limit","truncated"]}`),
				Annotations: manifest.Annotations{ReadOnly: true, Idempotent: true},
			},
			{
				Slug:         ToolDelete,
				Title:        "Delete a file",
				Description:  "Deletes a file or a directory tree of the workspace; a link is deleted, not what it points at.",
				InputSchema:  raw(`{"type":"object","properties":{` + planSchema + `,` + pathSchema + `},"required":["path"],"additionalProperties":false}`),
				OutputSchema: raw(`{"type":"object","properties":{"path":{"type":"string"},"deleted":{"type":"boolean"}},"required":["path","deleted"]}`),
				Annotations:  manifest.Annotations{Destructive: true},
			},
			{
				Slug:  ToolExec,
				Title: "Run a shell line",
				Description: fmt.Sprintf("Runs one bash line in the workspace (creating it) and returns exit_code, stdout, stderr (each capped at %d KiB; "+
					"truncated says so) and duration_ms. The whole line is checked before it runs: builtins (echo, printf, test, read, cd, set, ...) "+
					"and the tools this server provides; no network, no other shell, no eval, no functions, no background jobs, "+
					"no paths outside the workspace. A refusal is a COMMAND_NOT_ALLOWED error naming the command, the rule and the position; "+
					"NEEDS_COMPUTER_USE means the step needs the user's own computer. timeout_seconds: default %d, at most %d.",
					maxOutput>>10, int(defaultTimeout.Seconds()), int(maxTimeout.Seconds())),
				InputSchema: raw(`{"type":"object","properties":{` + planSchema + `,
  "command":{"type":"string","minLength":1,"description":"One bash line (lists, pipelines, loops and here-docs allowed)."},
  "stdin":{"type":"string","description":"Standard input of the line."},
  "timeout_seconds":{"type":"integer","minimum":1}},"required":["command"],"additionalProperties":false}`),
				OutputSchema: raw(`{"type":"object","properties":{"exit_code":{"type":"integer"},"stdout":{"type":"string"},"stderr":{"type":"string"},
  "truncated":{"type":"boolean"},"timed_out":{"type":"boolean"},"duration_ms":{"type":"integer"}},
  "required":["exit_code","stdout","stderr","truncated","duration_ms"]}`),
				Annotations: manifest.Annotations{Destructive: true},
			},
			{
				Slug:         ToolRelease,
				Title:        "Release a workspace",
				Description:  "Deletes the workspace and everything in it, stopping a command running in it. Releasing one that does not exist succeeds.",
				InputSchema:  raw(`{"type":"object","properties":{` + planSchema + `},"additionalProperties":false}`),
				OutputSchema: raw(`{"type":"object","properties":{"plan":{"type":"string"},"released":{"type":"boolean"}},"required":["plan","released"]}`),
				Annotations:  manifest.Annotations{Destructive: true, Idempotent: true},
			},
		},
	}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }
