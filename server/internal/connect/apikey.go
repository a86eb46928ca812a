package connect

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/connections"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// MaxFieldLen caps one API-key form value in bytes.
const MaxFieldLen = 4096

// FieldError is what is wrong with one form field.
type FieldError struct {
	Field   string // the manifest's field name; empty for the form as a whole
	Message string // for the person filling the form, naming the field by its label
}

// FieldErrors lists every problem of a submitted API-key form. It wraps
// ErrInvalidInput.
type FieldErrors []FieldError

func (e FieldErrors) Error() string {
	msgs := make([]string, len(e))
	for i, f := range e {
		msgs[i] = f.Message
	}
	return "connect: " + strings.Join(msgs, "; ")
}

// Unwrap makes errors.Is(err, ErrInvalidInput) hold.
func (e FieldErrors) Unwrap() error { return ErrInvalidInput }

// ValidateFields checks submitted values against a manifest's API-key
// fields and returns the values to store: trimmed, only declared fields,
// empty optional ones left out. A field must be filled when required, be
// valid UTF-8 without control characters and at most MaxFieldLen bytes, and
// match its pattern (a Go regular expression the whole value must match).
func ValidateFields(fields []manifest.Field, values map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(fields))
	var problems FieldErrors
	for _, f := range fields {
		label := f.Label
		if label == "" {
			label = f.Name
		}
		v := strings.TrimSpace(values[f.Name])
		var msg string
		switch {
		case v == "" && f.Required:
			msg = label + " is required"
		case v == "":
			continue
		case len(v) > MaxFieldLen:
			msg = fmt.Sprintf("%s is longer than %d characters", label, MaxFieldLen)
		case !utf8.ValidString(v) || strings.IndexFunc(v, unicode.IsControl) >= 0:
			msg = label + " contains control characters or invalid text"
		case f.Pattern != "" && !fullMatch(f.Pattern, v):
			msg = fmt.Sprintf("%s is not in the expected format (it must match %s)", label, f.Pattern)
		}
		if msg != "" {
			problems = append(problems, FieldError{Field: f.Name, Message: msg})
			continue
		}
		out[f.Name] = v
	}
	if len(problems) > 0 {
		return nil, problems
	}
	if len(out) == 0 {
		return nil, FieldErrors{{Message: "fill in at least one field"}}
	}
	return out, nil
}

// fullMatch reports whether the whole of v matches pattern. A pattern that
// does not compile (the manifest validator rejects those) matches nothing.
func fullMatch(pattern, v string) bool {
	re, err := regexp.Compile(`^(?:` + pattern + `)$`)
	return err == nil && re.MatchString(v)
}

// SubmitAPIKey completes the user's apikey handshake id with the submitted
// form values: they are validated against the manifest's fields (errors are
// FieldErrors, and the handshake stays PENDING for another try), sealed, and
// stored as the user's connection in the same step that marks the handshake
// CONNECTED.
func (s *Service) SubmitAPIKey(ctx context.Context, userID, id string, values map[string]string) (store.PendingConnection, error) {
	p, err := s.open(ctx, userID, id, manifest.ModeAPIKey)
	if err != nil {
		return store.PendingConnection{}, err
	}
	m, ok := s.catalog.Manifest(p.Integration)
	if !ok || m.Auth.Mode != manifest.ModeAPIKey || m.Auth.APIKey == nil {
		return store.PendingConnection{}, fmt.Errorf("connect: %w: %s is no longer loaded as an API-key integration", failure.ErrUnknownIntegration, p.Integration)
	}
	fields, err := ValidateFields(m.Auth.APIKey.Fields, values)
	if err != nil {
		return store.PendingConnection{}, err
	}
	row, err := s.vault.Seal(ctx, userID, p.Integration, connections.Secret{Mode: credential.ModeAPIKey, Credential: credential.Credential{Fields: fields}})
	if err != nil {
		return store.PendingConnection{}, err
	}
	if err := s.finish(ctx, p, store.Outcome{Status: store.PendingConnected, Connection: &row}); err != nil {
		return store.PendingConnection{}, err
	}
	return s.store.Pending(ctx, userID, id)
}
