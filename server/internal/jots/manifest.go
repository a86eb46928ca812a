package jots

import (
	"encoding/json"

	"github.com/workbench-dev/workbench/runtime/manifest"
)

// Integration is the name of the built-in integration.
const Integration = "jots"

// Tool slugs.
const (
	ToolDeploy    = "jots_deploy_jot"
	ToolUpdate    = "jots_update_jot"
	ToolListFiles = "jots_list_jot_files"
	ToolList      = "jots_list_jots"
	ToolDelete    = "jots_delete_jot"
)

const nameSchema = `{"type":"string","pattern":"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$","description":"The jot's name: a lower-case DNS label (a-z, 0-9, inner '-', 1 to 63 characters). Names are global: the first user to claim one owns it."}`

const jotSummarySchema = `{"type":"object","properties":{
  "name":{"type":"string"},"url":{"type":"string","description":"Where the jot is served."},
  "access":{"type":"string","enum":["public","password"]},"cors":{"type":"boolean"},
  "version":{"type":"integer","description":"Bumped by every change."},
  "files":{"type":"integer"},"bytes":{"type":"integer"},
  "publishedAt":{"type":"string","description":"When the last upload published; absent before the first."},
  "updatedAt":{"type":"string"}},
  "required":["name","url","access","cors","version","files","bytes","updatedAt"]}`

// Manifest returns the built-in integration's manifest; limits are quoted
// in the descriptions.
func Manifest(lim Limits) *manifest.Manifest {
	lim = lim.withDefaults()
	limits := lim.describe()
	return &manifest.Manifest{
		ABI:         1,
		Name:        Integration,
		Version:     "1.0.0",
		Title:       "Jots",
		Description: "Publish small static sites (HTML, CSS, JS, JSON, images) at a Workbench URL for a person to open: reports, charts, prototypes.",
		Categories:  []string{"publishing"},
		Auth:        manifest.Auth{Mode: manifest.ModeNone},
		Tools: []manifest.Tool{
			{
				Slug:  ToolDeploy,
				Title: "Deploy a jot",
				Description: "Claims a jot name (or reuses your own jot of that name) and returns a single-use upload URL valid for a few minutes (expiresAt). " +
					"Publish by PUTting a gzip tarball of the site to it, e.g. `tar -czf site.tgz -C ./site . && curl -fsS -T site.tgz '<uploadUrl>'`. " +
					"index.html is the default page. The upload replaces every file; if it fails nothing changes and the URL stays usable until it expires. " +
					"Tarballs may hold only regular files and directories with relative paths (no '..', links or devices; no two paths equal ignoring case). " +
					"Limits: " + limits + ". access 'password' requires password and shows viewers a password form; cors (public jots only) " +
					"adds Access-Control-Allow-Origin: * so the page's scripts can fetch its own JSON. Pages run sandboxed on an opaque origin. " +
					"The settings apply when the upload publishes.",
				InputSchema: raw(`{"type":"object","properties":{"name":` + nameSchema + `,
  "access":{"type":"string","enum":["public","password"],"description":"public: anyone with the URL; password: viewers must enter the password."},
  "password":{"type":"string","minLength":1,"maxLength":1024,"description":"Required with access 'password'; stored hashed."},
  "cors":{"type":"boolean","description":"Public jots only: serve files with Access-Control-Allow-Origin: *. Default false."}},
  "required":["name","access"],"additionalProperties":false}`),
				OutputSchema: raw(`{"type":"object","properties":{"name":{"type":"string"},
  "uploadUrl":{"type":"string","description":"PUT the gzip tarball here; single use."},"method":{"type":"string","const":"PUT"},
  "expiresAt":{"type":"string"},"url":{"type":"string","description":"Where the jot will be served."},
  "maxBytes":{"type":"integer"},"maxFiles":{"type":"integer"},"example":{"type":"string"}},
  "required":["name","uploadUrl","method","expiresAt","url","maxBytes","maxFiles","example"]}`),
				Annotations: manifest.Annotations{OpenWorld: true},
			},
			{
				Slug:  ToolUpdate,
				Title: "Update a jot",
				Description: "Patches one of your jots without an upload, in one step that fully applies or changes nothing: put files (path plus content; " +
					"encoding 'base64' for binary), merge a small base64 gzip tarball, delete paths, or change access, password or cors. " +
					"Putting an existing path replaces it; a path equal to another only ignoring case is refused. The result must stay within " + limits + ". " +
					"Switching to access 'password' needs a password (and cors false); switching to 'public' drops the password.",
				InputSchema: raw(`{"type":"object","properties":{"name":` + nameSchema + `,
  "files":{"type":"array","maxItems":1000,"description":"Files to add or replace.","items":{"type":"object","properties":{
    "path":{"type":"string","minLength":1,"maxLength":512,"description":"Relative path such as 'data/points.json'."},
    "content":{"type":"string","description":"The file's content: UTF-8 text, or base64 with encoding 'base64'."},
    "encoding":{"type":"string","enum":["utf-8","base64"],"description":"Default utf-8."}},
    "required":["path","content"],"additionalProperties":false}},
  "tarball":{"type":"string","description":"A base64 gzip tarball whose files are added or replaced."},
  "delete":{"type":"array","maxItems":1000,"items":{"type":"string","minLength":1,"maxLength":512},"description":"Paths to delete; each must exist."},
  "access":{"type":"string","enum":["public","password"]},
  "password":{"type":"string","minLength":1,"maxLength":1024,"description":"New password (access 'password' only)."},
  "cors":{"type":"boolean","description":"Public jots only."}},
  "required":["name"],"additionalProperties":false}`),
				OutputSchema: raw(jotSummarySchema),
				Annotations:  manifest.Annotations{Destructive: true, OpenWorld: true},
			},
			{
				Slug:        ToolListFiles,
				Title:       "List a jot's files",
				Description: "Lists the files of one of your jots: path, size in bytes, content type and sha256 (hex), sorted by path.",
				InputSchema: raw(`{"type":"object","properties":{"name":` + nameSchema + `},"required":["name"],"additionalProperties":false}`),
				OutputSchema: raw(`{"type":"object","properties":{"name":{"type":"string"},"url":{"type":"string"},"version":{"type":"integer"},
  "totalBytes":{"type":"integer"},"files":{"type":"array","items":{"type":"object","properties":{
    "path":{"type":"string"},"size":{"type":"integer"},"contentType":{"type":"string"},"sha256":{"type":"string"}},
    "required":["path","size","contentType","sha256"]}}},"required":["name","url","version","totalBytes","files"]}`),
				Annotations: manifest.Annotations{ReadOnly: true, Idempotent: true},
			},
			{
				Slug:         ToolList,
				Title:        "List your jots",
				Description:  "Lists your jots with their URLs, access, cors, version, file count and size, by name.",
				InputSchema:  raw(`{"type":"object","properties":{},"additionalProperties":false}`),
				OutputSchema: raw(`{"type":"object","properties":{"jots":{"type":"array","items":` + jotSummarySchema + `}},"required":["jots"]}`),
				Annotations:  manifest.Annotations{ReadOnly: true, Idempotent: true},
			},
			{
				Slug:         ToolDelete,
				Title:        "Delete a jot",
				Description:  "Deletes one of your jots and all its files at once; its URL stops working and the name becomes free for anyone.",
				InputSchema:  raw(`{"type":"object","properties":{"name":` + nameSchema + `},"required":["name"],"additionalProperties":false}`),
				OutputSchema: raw(`{"type":"object","properties":{"name":{"type":"string"},"deleted":{"type":"boolean"}},"required":["name","deleted"]}`),
				Annotations:  manifest.Annotations{Destructive: true, Idempotent: true},
			},
		},
	}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }
