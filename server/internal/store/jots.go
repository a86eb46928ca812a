package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// JotStore holds jots: their settings, files and pending uploads. Jot names
// are global (across tenants) and unique; files are unique per jot ignoring
// case. Every change to a jot bumps its Version in the same transaction.
type JotStore interface {
	// CreateJot claims a name for a user with the given settings and no
	// files, until j.ClaimUntil unless it is published or gets files. A
	// name used by anyone is ErrConflict, unless it is a released claim
	// (Jot.Released), which is deleted and taken over in the same
	// transaction. A user holding j.Quota.MaxJots jots (released claims
	// not counted) gets ErrJotQuota.
	CreateJot(ctx context.Context, j NewJot) (Jot, error)
	// Jot returns the jot with this name, whoever owns it.
	Jot(ctx context.Context, name string) (Jot, error)
	// JotsOf lists the user's jots by name.
	JotsOf(ctx context.Context, userID string) ([]Jot, error)
	// DeleteJot deletes one of the user's jots with its files and uploads.
	// Another user's jot or an unknown name is ErrNotFound.
	DeleteJot(ctx context.Context, userID, name string) error
	// JotFiles lists a jot's files by path, without their content.
	JotFiles(ctx context.Context, jotID string) ([]JotFile, error)
	// JotFile returns one file of a jot with its content.
	JotFile(ctx context.Context, jotID, path string) (JotFile, []byte, error)

	// CreateJotUpload records an upload token for one of the user's jots
	// and extends the jot's claim to the upload's expiry.
	CreateJotUpload(ctx context.Context, u NewJotUpload) (JotUpload, error)
	// JotUpload returns the unused upload with this token hash. A used or
	// unknown one is ErrNotFound, one past its ExpiresAt ErrExpired.
	JotUpload(ctx context.Context, tokenHash string) (JotUpload, error)
	// PublishJot uses up the upload with this token hash and, in the same
	// transaction, replaces every file of its jot with files, applies the
	// upload's settings and bumps the version. A used or unknown upload is
	// ErrNotFound, an expired one ErrExpired; files over the limits are
	// ErrJotLimit, over the user's lim.Quota.MaxBytes ErrJotQuota; two
	// paths equal ignoring case are ErrConflict. On any error nothing
	// changes.
	PublishJot(ctx context.Context, tokenHash string, files []JotContent, lim JotLimits) (Jot, error)
	// PatchJot changes one of the user's jots in one transaction: it puts
	// and deletes files and replaces the settings. The result must stay
	// within p.Limits (ErrJotLimit, ErrJotQuota); deleting a missing path is ErrNotFound; a
	// path equal to another ignoring case is ErrConflict. Another user's
	// jot is ErrNotFound. On any error nothing changes.
	PatchJot(ctx context.Context, userID, name string, p JotPatch) (Jot, error)
	// PruneJotUploads deletes used and expired uploads and returns how many.
	PruneJotUploads(ctx context.Context) (int, error)
	// ReleaseJotClaims deletes the released claims (Jot.Released) and
	// returns how many.
	ReleaseJotClaims(ctx context.Context) (int, error)
}

// ErrJotLimit: a jot would hold more files or bytes than allowed.
var ErrJotLimit = errors.New("jot limit exceeded")

// ErrJotQuota: a user would hold more jots, or more bytes in all their
// jots, than allowed.
var ErrJotQuota = errors.New("jot quota exceeded")

// JotAccess says who may open a jot.
type JotAccess string

// The jot access modes.
const (
	JotPublic   JotAccess = "public"
	JotPassword JotAccess = "password"
)

// Limits on jot records.
const (
	MaxJotNameLen = 63
	MaxJotPathLen = 512
	jotKeyLen     = 32
)

// JotSettings are who may open a jot and how.
type JotSettings struct {
	Access       JotAccess
	PasswordHash string // encoded argon2id hash; set exactly when Access is password
	CORS         bool   // public jots only
}

// Jot is a static site with a global name.
type Jot struct {
	ID       string // "jot_" and random characters
	Name     string
	TenantID string
	UserID   string
	JotSettings
	// CookieKey is the HMAC key of the jot's unlock cookies; it changes
	// whenever the access or the password hash does.
	CookieKey   []byte
	Version     int64 // bumped by every change to the jot
	Files       int
	Bytes       int64
	PublishedAt time.Time // zero until the first upload
	// ClaimUntil is when the name is released if the jot is still
	// unpublished and without files: the expiry of its latest upload URL.
	ClaimUntil time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Released reports whether the jot is a claim that lapsed at now: never
// published, no files, and its last upload URL expired. Its name is free.
func (j Jot) Released(now time.Time) bool {
	return j.PublishedAt.IsZero() && j.Files == 0 && !j.ClaimUntil.IsZero() && !now.Before(j.ClaimUntil)
}

// NewJot is what CreateJot needs.
type NewJot struct {
	UserID string
	Name   string
	JotSettings
	// ClaimUntil is when the claim lapses unless published or given files
	// (uploads extend it); zero keeps it until the jot is deleted.
	ClaimUntil time.Time
	Quota      JotQuota
}

// JotQuota bounds what one user's jots hold together. A zero field is no
// bound.
type JotQuota struct {
	MaxJots  int   // jots of one user, released claims not counted
	MaxBytes int64 // file content of all of one user's jots
}

// JotFile is a file's record without its content.
type JotFile struct {
	Path        string
	ContentType string
	Size        int64
	SHA256      string // hex
	ModifiedAt  time.Time
}

// JotContent is a file to store; the store computes its size and sha256.
type JotContent struct {
	Path        string
	ContentType string
	Data        []byte
}

// JotLimits bound a jot's files, and with Quota the user's jots together.
type JotLimits struct {
	MaxFiles int
	MaxBytes int64
	Quota    JotQuota
}

// JotPatch is what PatchJot changes.
type JotPatch struct {
	Put      []JotContent
	Delete   []string
	Settings *JotSettings // nil keeps the settings
	Limits   JotLimits
}

// JotUpload is a pending upload: the settings apply when it publishes.
type JotUpload struct {
	TokenHash string
	JotID     string
	UserID    string
	JotSettings
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time
}

// NewJotUpload is what CreateJotUpload needs.
type NewJotUpload struct {
	JotID     string
	UserID    string
	TokenHash string // hex SHA-256 of the upload token
	JotSettings
	ExpiresAt time.Time
}

// PrefixJot starts jot ids.
const PrefixJot = "jot_"

// CheckJotName validates a jot name: a lower-case DNS label.
func CheckJotName(name string) error {
	if name == "" || len(name) > MaxJotNameLen {
		return fmt.Errorf("%w: jot name must be 1 to %d characters", ErrInvalid, MaxJotNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' && i > 0 && i < len(name)-1
		if !ok {
			return fmt.Errorf("%w: jot name %q must be lower-case letters, digits and inner '-' (a DNS label)", ErrInvalid, name)
		}
	}
	return nil
}

// CheckJotSettings validates s.
func CheckJotSettings(s JotSettings) error {
	switch s.Access {
	case JotPublic:
		if s.PasswordHash != "" {
			return fmt.Errorf("%w: a public jot has no password", ErrInvalid)
		}
	case JotPassword:
		if s.PasswordHash == "" {
			return fmt.Errorf("%w: a password jot needs a password hash", ErrInvalid)
		}
		if s.CORS {
			return fmt.Errorf("%w: CORS is for public jots only", ErrInvalid)
		}
	default:
		return fmt.Errorf("%w: jot access %q is not public or password", ErrInvalid, s.Access)
	}
	if len(s.PasswordHash) > MaxNameLen*4 {
		return fmt.Errorf("%w: password hash is too long", ErrInvalid)
	}
	return nil
}

// CheckJotPath validates a stored file path: relative, slash-separated,
// clean, valid UTF-8 without control characters or backslashes.
func CheckJotPath(p string) error {
	if p == "" || len(p) > MaxJotPathLen || !utf8.ValidString(p) {
		return fmt.Errorf("%w: file path must be valid UTF-8 of 1 to %d bytes", ErrInvalid, MaxJotPathLen)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return fmt.Errorf("%w: file path %q holds a control character or a backslash", ErrInvalid, p)
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%w: file path %q must be relative and clean (no empty, '.' or '..' segments)", ErrInvalid, p)
		}
	}
	return nil
}

// JotPathKey is the key under which paths are unique in a jot: the path
// lower-cased.
func JotPathKey(p string) string { return strings.ToLower(p) }

// CheckJotContents validates files to store and that they fit lim, given
// the files and bytes a jot keeps besides them.
func CheckJotContents(files []JotContent, keptFiles int, keptBytes int64, lim JotLimits) error {
	total := keptBytes
	for _, f := range files {
		if err := CheckJotPath(f.Path); err != nil {
			return err
		}
		if f.ContentType == "" || len(f.ContentType) > MaxNameLen {
			return fmt.Errorf("%w: file %q needs a content type of at most %d bytes", ErrInvalid, f.Path, MaxNameLen)
		}
		total += int64(len(f.Data))
	}
	if lim.MaxFiles <= 0 || lim.MaxBytes <= 0 {
		return fmt.Errorf("%w: jot limits must be positive", ErrInvalid)
	}
	if n := keptFiles + len(files); n > lim.MaxFiles {
		return fmt.Errorf("%w: %d files is over the limit of %d files", ErrJotLimit, n, lim.MaxFiles)
	}
	if total > lim.MaxBytes {
		return fmt.Errorf("%w: %d bytes is over the limit of %d bytes", ErrJotLimit, total, lim.MaxBytes)
	}
	return nil
}

// NewJotKey returns a new random cookie key.
func NewJotKey() []byte {
	k := make([]byte, jotKeyLen)
	_, _ = rand.Read(k) // crypto/rand.Read never fails
	return k
}
