package jots

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/jots/tarball"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/toolcall"
)

func toolErr(code failure.Code, format string, args ...any) *failure.Error {
	return &failure.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Call runs one of the jots tools for c.UserID. Every failure is a
// *failure.Error.
func (s *Service) Call(ctx context.Context, c toolcall.Call) (json.RawMessage, error) {
	if c.UserID == "" {
		return nil, toolErr(failure.InvalidArguments, "the call has no user")
	}
	var out any
	var err error
	switch c.Tool {
	case ToolDeploy:
		var in deployInput
		if err = decode(c.Input, &in); err == nil {
			out, err = s.deploy(ctx, c.UserID, in)
		}
	case ToolUpdate:
		var in updateInput
		if err = decode(c.Input, &in); err == nil {
			out, err = s.update(ctx, c.UserID, in)
		}
	case ToolListFiles:
		var in nameInput
		if err = decode(c.Input, &in); err == nil {
			out, err = s.listFiles(ctx, c.UserID, in.Name)
		}
	case ToolList:
		out, err = s.list(ctx, c.UserID)
	case ToolDelete:
		var in nameInput
		if err = decode(c.Input, &in); err == nil {
			out, err = s.delete(ctx, c.UserID, in.Name)
		}
	default:
		return nil, toolErr(failure.UnknownTool, "jots has no tool %q", c.Tool)
	}
	if err != nil {
		var te *failure.Error
		if errors.As(err, &te) {
			return nil, te
		}
		s.logger.Error("jots tool failed", "tool", c.Tool, "user", c.UserID, "err", err)
		return nil, toolErr(failure.ToolError, "%s failed inside Workbench; try again", c.Tool)
	}
	data, err := json.Marshal(out)
	if err != nil {
		return nil, toolErr(failure.ToolError, "encoding the result: %v", err)
	}
	return data, nil
}

func decode(input []byte, v any) error {
	if len(bytes.TrimSpace(input)) == 0 {
		input = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return toolErr(failure.InvalidArguments, "arguments: %v", err)
	}
	return nil
}

type nameInput struct {
	Name string `json:"name"`
}

type deployInput struct {
	Name     string  `json:"name"`
	Access   string  `json:"access"`
	Password *string `json:"password"`
	CORS     *bool   `json:"cors"`
}

type deployOutput struct {
	Name      string `json:"name"`
	UploadURL string `json:"uploadUrl"`
	Method    string `json:"method"`
	ExpiresAt string `json:"expiresAt"`
	URL       string `json:"url"`
	MaxBytes  int64  `json:"maxBytes"`
	MaxFiles  int    `json:"maxFiles"`
	Example   string `json:"example"`
}

// RoutePrefix is the path under which jots are served and uploaded.
const RoutePrefix = "/j/"

// UploadPrefix is the path under which upload URLs live; "_upload" can
// never be a jot name.
const UploadPrefix = RoutePrefix + "_upload/"

func (s *Service) deploy(ctx context.Context, userID string, in deployInput) (*deployOutput, error) {
	if err := checkName(in.Name); err != nil {
		return nil, err
	}
	settings, err := s.settingsFor(ctx, store.JotSettings{}, &in.Access, in.Password, in.CORS, true)
	if err != nil {
		return nil, err
	}
	j, err := s.claim(ctx, userID, in.Name, settings)
	if err != nil {
		return nil, err
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails
	token := base64.RawURLEncoding.EncodeToString(raw[:])
	expires := s.now().Add(s.limits.UploadTTL).UTC()
	if _, err := s.store.CreateJotUpload(ctx, store.NewJotUpload{JotID: j.ID, UserID: userID, TokenHash: secrets.HashToken(token),
		JotSettings: settings, ExpiresAt: expires}); err != nil {
		if errors.Is(err, store.ErrNotFound) { // deleted meanwhile
			return nil, toolErr(failure.NotFound, "jot %q was deleted meanwhile; deploy again", in.Name)
		}
		return nil, err
	}
	upload := s.origin + UploadPrefix + token
	return &deployOutput{
		Name: in.Name, UploadURL: upload, Method: "PUT", ExpiresAt: expires.Format(time.RFC3339), URL: s.URL(in.Name),
		MaxBytes: s.limits.MaxBytes, MaxFiles: s.limits.MaxFiles,
		Example: fmt.Sprintf("tar -czf site.tgz -C ./site . && curl -fsS -T site.tgz '%s'", upload),
	}, nil
}

// claim returns the user's jot of this name, creating it if the name is
// free or its claim lapsed (never uploaded to before its upload URL
// expired); another user's name is NAME_TAKEN, a reserved name
// INVALID_ARGUMENTS, a claim past the user's quota LIMIT_EXCEEDED.
func (s *Service) claim(ctx context.Context, userID, name string, settings store.JotSettings) (store.Jot, error) {
	for range 2 {
		j, err := s.store.Jot(ctx, name)
		switch {
		case err == nil && j.Released(s.now()):
		case err == nil && j.UserID != userID:
			return store.Jot{}, taken(name)
		case err == nil:
			return j, nil
		case !errors.Is(err, store.ErrNotFound):
			return store.Jot{}, err
		}
		if reservedNames[name] {
			return store.Jot{}, toolErr(failure.InvalidArguments, "name: %q is reserved (%s); choose another name", name, reservedList())
		}
		j, err = s.store.CreateJot(ctx, store.NewJot{UserID: userID, Name: name, JotSettings: settings,
			ClaimUntil: s.now().Add(s.limits.UploadTTL), Quota: s.limits.quota()})
		switch {
		case err == nil:
			s.cache.forget(name)
			return j, nil
		case errors.Is(err, store.ErrJotQuota):
			return store.Jot{}, s.overQuota(err)
		case !errors.Is(err, store.ErrConflict):
			return store.Jot{}, err
		}
		// Claimed concurrently: look again.
	}
	return store.Jot{}, taken(name)
}

// reservedNames are names no jot may newly take: they would pass for the
// service's own pages under the jots host.
var reservedNames = map[string]bool{
	"admin": true, "administrator": true, "api": true, "app": true, "auth": true, "help": true, "login": true,
	"logout": true, "mail": true, "mcp": true, "oauth": true, "root": true, "security": true, "signin": true,
	"signup": true, "static": true, "status": true, "support": true, "workbench": true, "www": true,
}

func reservedList() string {
	names := slices.Sorted(maps.Keys(reservedNames))
	return strings.Join(names, ", ")
}

// overQuota is the tool error of a store.ErrJotQuota: the bound and how to
// get under it.
func (s *Service) overQuota(err error) error {
	return toolErr(failure.LimitExceeded, "%s; the limits are %s; delete a jot with %s to make room",
		trimStore(err), s.limits.describeQuota(), ToolDelete)
}

// trimStore drops the store's "store: " prefix and the sentinel suffix.
func trimStore(err error) string {
	msg := strings.TrimPrefix(err.Error(), "store: ")
	return strings.TrimSuffix(msg, ": "+store.ErrJotQuota.Error())
}

func taken(name string) error {
	return toolErr(failure.NameTaken, "the jot name %q is taken by another user; jot names are global and belong to whoever claimed them first; choose another name", name)
}

func checkName(name string) error {
	if err := store.CheckJotName(name); err != nil {
		return toolErr(failure.InvalidArguments, "name: %s", trimSentinel(err))
	}
	return nil
}

// trimSentinel drops the store's "invalid argument: " prefix.
func trimSentinel(err error) string {
	msg := err.Error()
	if p := store.ErrInvalid.Error() + ": "; len(msg) > len(p) && msg[:len(p)] == p {
		return msg[len(p):]
	}
	return msg
}

// owned returns the user's jot of this name: NOT_FOUND if nobody has it,
// NAME_TAKEN if another user does.
func (s *Service) owned(ctx context.Context, userID, name string) (store.Jot, error) {
	if err := checkName(name); err != nil {
		return store.Jot{}, err
	}
	j, err := s.store.Jot(ctx, name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Jot{}, toolErr(failure.NotFound, "you have no jot named %q; create it with %s", name, ToolDeploy)
	case err != nil:
		return store.Jot{}, err
	case j.UserID != userID:
		return store.Jot{}, taken(name)
	}
	return j, nil
}

// settingsFor applies access, password and cors (nil: unchanged) to cur.
func (s *Service) settingsFor(ctx context.Context, cur store.JotSettings, access, password *string, cors *bool, fresh bool) (store.JotSettings, error) {
	next := cur
	if access != nil {
		next.Access = store.JotAccess(*access)
	}
	if cors != nil {
		next.CORS = *cors
	}
	switch next.Access {
	case store.JotPublic:
		if password != nil {
			return next, toolErr(failure.InvalidArguments, "password is only for access 'password'; this jot would be public")
		}
		next.PasswordHash = ""
	case store.JotPassword:
		if next.CORS {
			return next, toolErr(failure.InvalidArguments, "cors is accepted only for public jots; pass cors: false with access 'password'")
		}
		switch {
		case password != nil:
			h, err := s.passwords.Hash(ctx, *password)
			switch {
			case errors.Is(err, secrets.ErrBusy):
				return next, toolErr(failure.Unavailable, "%v; try again in %v", err, secrets.BusyRetryAfter)
			case errors.Is(err, secrets.ErrPassword):
				return next, toolErr(failure.InvalidArguments, "password: %v", err)
			case err != nil:
				return next, err
			}
			next.PasswordHash = h
		case fresh || cur.Access != store.JotPassword:
			return next, toolErr(failure.InvalidArguments, "access 'password' needs a password")
		}
	default:
		return next, toolErr(failure.InvalidArguments, "access must be 'public' or 'password', got %q", next.Access)
	}
	return next, nil
}

type fileInput struct {
	Path     string `json:"path"`
	Content  string `json:"content"`
	Encoding string `json:"encoding"`
}

type updateInput struct {
	Name     string      `json:"name"`
	Files    []fileInput `json:"files"`
	Tarball  *string     `json:"tarball"`
	Delete   []string    `json:"delete"`
	Access   *string     `json:"access"`
	Password *string     `json:"password"`
	CORS     *bool       `json:"cors"`
}

type jotSummary struct {
	Name        string `json:"name"`
	URL         string `json:"url"`
	Access      string `json:"access"`
	CORS        bool   `json:"cors"`
	Version     int64  `json:"version"`
	Files       int    `json:"files"`
	Bytes       int64  `json:"bytes"`
	PublishedAt string `json:"publishedAt,omitempty"`
	UpdatedAt   string `json:"updatedAt"`
}

func (s *Service) summary(j store.Jot) jotSummary {
	out := jotSummary{Name: j.Name, URL: s.URL(j.Name), Access: string(j.Access), CORS: j.CORS, Version: j.Version,
		Files: j.Files, Bytes: j.Bytes, UpdatedAt: j.UpdatedAt.UTC().Format(time.RFC3339)}
	if !j.PublishedAt.IsZero() {
		out.PublishedAt = j.PublishedAt.UTC().Format(time.RFC3339)
	}
	return out
}

func (s *Service) update(ctx context.Context, userID string, in updateInput) (*jotSummary, error) {
	j, err := s.owned(ctx, userID, in.Name)
	if err != nil {
		return nil, err
	}
	patch := store.JotPatch{Limits: s.limits.store()}
	seen := map[string]string{}
	put := func(p string, data []byte, what string) error {
		clean, err := tarball.CleanPath(p)
		if err != nil {
			return toolErr(failure.InvalidArguments, "%s: %s", what, trimTarball(err))
		}
		if prev, dup := seen[store.JotPathKey(clean)]; dup {
			return toolErr(failure.PathConflict, "%s: %q is given twice (as %q too; paths are compared ignoring case)", what, clean, prev)
		}
		seen[store.JotPathKey(clean)] = clean
		patch.Put = append(patch.Put, store.JotContent{Path: clean, ContentType: ContentType(clean, data), Data: data})
		return nil
	}
	for i, f := range in.Files {
		data := []byte(f.Content)
		if f.Encoding == "base64" {
			if data, err = base64.StdEncoding.DecodeString(f.Content); err != nil {
				return nil, toolErr(failure.InvalidArguments, "files[%d].content is not valid base64: %v", i, err)
			}
		}
		if err := put(f.Path, data, fmt.Sprintf("files[%d].path", i)); err != nil {
			return nil, err
		}
	}
	if in.Tarball != nil {
		raw, err := base64.StdEncoding.DecodeString(*in.Tarball)
		if err != nil {
			return nil, toolErr(failure.InvalidArguments, "tarball is not valid base64: %v", err)
		}
		files, err := tarball.Extract(bytes.NewReader(raw), s.limits.tarball())
		if err != nil {
			return nil, tarballToolErr(err)
		}
		for _, f := range files {
			if err := put(f.Path, f.Data, "tarball"); err != nil {
				return nil, err
			}
		}
	}
	for i, d := range in.Delete {
		clean, err := tarball.CleanPath(d)
		if err != nil {
			return nil, toolErr(failure.InvalidArguments, "delete[%d]: %s", i, trimTarball(err))
		}
		if _, dup := seen[store.JotPathKey(clean)]; dup {
			return nil, toolErr(failure.PathConflict, "delete[%d]: %q is also being put", i, clean)
		}
		patch.Delete = append(patch.Delete, clean)
	}
	if in.Access != nil || in.Password != nil || in.CORS != nil {
		settings, err := s.settingsFor(ctx, j.JotSettings, in.Access, in.Password, in.CORS, false)
		if err != nil {
			return nil, err
		}
		patch.Settings = &settings
	}
	if len(patch.Put) == 0 && len(patch.Delete) == 0 && patch.Settings == nil {
		return nil, toolErr(failure.InvalidArguments, "nothing to update: give files, tarball, delete, access, password or cors")
	}
	j, err = s.store.PatchJot(ctx, userID, in.Name, patch)
	s.cache.forget(in.Name)
	switch {
	case errors.Is(err, store.ErrJotQuota):
		return nil, s.overQuota(err)
	case errors.Is(err, store.ErrJotLimit):
		return nil, toolErr(failure.LimitExceeded, "jot %q would go over its limits (%s): %s", in.Name, s.limits.describe(), err)
	case errors.Is(err, store.ErrConflict):
		return nil, toolErr(failure.PathConflict, "a path equals an existing file's path ignoring case; delete the old file or use its exact path: %s", err)
	case errors.Is(err, store.ErrNotFound):
		return nil, toolErr(failure.NotFound, "jot %q: %s (nothing was changed)", in.Name, err)
	case err != nil:
		return nil, err
	}
	out := s.summary(j)
	return &out, nil
}

func trimTarball(err error) string {
	msg := err.Error()
	if p := tarball.ErrUnsafe.Error() + ": "; len(msg) > len(p) && msg[:len(p)] == p {
		return msg[len(p):]
	}
	return msg
}

func tarballToolErr(err error) error {
	switch {
	case errors.Is(err, tarball.ErrLimit):
		return toolErr(failure.LimitExceeded, "tarball: %v", err)
	case errors.Is(err, tarball.ErrDuplicate):
		return toolErr(failure.PathConflict, "tarball: %v", err)
	default:
		return toolErr(failure.InvalidArguments, "tarball: %v", err)
	}
}

type fileEntry struct {
	Path        string `json:"path"`
	Size        int64  `json:"size"`
	ContentType string `json:"contentType"`
	SHA256      string `json:"sha256"`
}

type filesOutput struct {
	Name       string      `json:"name"`
	URL        string      `json:"url"`
	Version    int64       `json:"version"`
	TotalBytes int64       `json:"totalBytes"`
	Files      []fileEntry `json:"files"`
}

func (s *Service) listFiles(ctx context.Context, userID, name string) (*filesOutput, error) {
	j, err := s.owned(ctx, userID, name)
	if err != nil {
		return nil, err
	}
	files, err := s.store.JotFiles(ctx, j.ID)
	if err != nil {
		return nil, err
	}
	out := &filesOutput{Name: name, URL: s.URL(name), Version: j.Version, Files: make([]fileEntry, len(files))}
	for i, f := range files {
		out.Files[i] = fileEntry{Path: f.Path, Size: f.Size, ContentType: f.ContentType, SHA256: f.SHA256}
		out.TotalBytes += f.Size
	}
	return out, nil
}

type listOutput struct {
	Jots []jotSummary `json:"jots"`
}

func (s *Service) list(ctx context.Context, userID string) (*listOutput, error) {
	jots, err := s.store.JotsOf(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := &listOutput{Jots: make([]jotSummary, len(jots))}
	for i, j := range jots {
		out.Jots[i] = s.summary(j)
	}
	return out, nil
}

type deleteOutput struct {
	Name    string `json:"name"`
	Deleted bool   `json:"deleted"`
}

func (s *Service) delete(ctx context.Context, userID, name string) (*deleteOutput, error) {
	if _, err := s.owned(ctx, userID, name); err != nil {
		return nil, err
	}
	err := s.store.DeleteJot(ctx, userID, name)
	s.cache.forget(name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, toolErr(failure.NotFound, "you have no jot named %q", name)
	}
	if err != nil {
		return nil, err
	}
	return &deleteOutput{Name: name, Deleted: true}, nil
}
