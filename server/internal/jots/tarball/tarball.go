package tarball

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Errors. Every error Extract returns wraps one of them.
var (
	// ErrLimit: the archive holds more files or bytes than allowed.
	ErrLimit = errors.New("tarball over a limit")
	// ErrUnsafe: an entry is not a regular file or directory, or its path
	// is not a clean relative path.
	ErrUnsafe = errors.New("unsafe tarball entry")
	// ErrDuplicate: two entries have paths equal ignoring case.
	ErrDuplicate = errors.New("duplicate path in tarball")
	// ErrCorrupt: the stream is not gzip or tar, is truncated, or has data
	// after its end.
	ErrCorrupt = errors.New("corrupt tarball")
)

// Path limits.
const (
	MaxPathLen   = 512
	MaxPathDepth = 32
)

// Limits bound an extraction. Names are what errors call the limits, such
// as an environment variable that sets them.
type Limits struct {
	MaxFiles     int
	MaxBytes     int64 // file content, summed
	MaxFilesName string
	MaxBytesName string
}

// headerAllowance is how many decompressed bytes of tar headers, padding
// and end-of-archive blocks each file (plus one) may take.
const headerAllowance = 2 << 10

// StreamLimit is the most decompressed bytes a tarball within lim may
// span: the content plus an allowance per file for headers and padding.
func (lim Limits) StreamLimit() int64 {
	return lim.MaxBytes + int64(lim.MaxFiles+32)*headerAllowance
}

// File is one extracted file.
type File struct {
	Path string // clean, relative, slash-separated
	Data []byte
}

// Extract reads a gzip-compressed tar stream from r and returns its regular
// files in archive order. Directory entries are skipped; PAX and GNU
// long-name records are read by archive/tar. It stops reading as soon as a
// limit is crossed.
func Extract(r io.Reader, lim Limits) ([]File, error) {
	if lim.MaxFiles <= 0 || lim.MaxBytes <= 0 {
		return nil, fmt.Errorf("%w: limits must be positive", ErrLimit)
	}
	zr, err := gzip.NewReader(bufio.NewReader(r))
	if err != nil {
		return nil, fmt.Errorf("%w: not a gzip stream: %v", ErrCorrupt, err)
	}
	defer zr.Close()
	stream := &cappedReader{r: zr, left: lim.StreamLimit()}
	tr := tar.NewReader(stream)
	var files []File
	seen := map[string]string{}
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, stream.explain(err, lim)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if _, err := CleanPath(strings.TrimSuffix(h.Name, "/")); err != nil && h.Name != "./" && h.Name != "." {
				return nil, err
			}
			continue
		case tar.TypeXGlobalHeader:
			continue
		case tar.TypeReg, tar.TypeRegA:
		default:
			return nil, fmt.Errorf("%w: %q is a %s; only regular files and directories are allowed", ErrUnsafe, h.Name, kind(h.Typeflag))
		}
		p, err := CleanPath(h.Name)
		if err != nil {
			return nil, err
		}
		key := strings.ToLower(p)
		if prev, dup := seen[key]; dup {
			return nil, fmt.Errorf("%w: %q and %q differ only in case (or repeat)", ErrDuplicate, prev, p)
		}
		seen[key] = p
		if len(files) == lim.MaxFiles {
			return nil, fmt.Errorf("%w: more than %d files (%s)", ErrLimit, lim.MaxFiles, nameOr(lim.MaxFilesName, "max files"))
		}
		if h.Size < 0 || h.Size > lim.MaxBytes-total {
			return nil, fmt.Errorf("%w: %q (%d bytes) takes the content over %d bytes (%s)", ErrLimit, p, h.Size, lim.MaxBytes, nameOr(lim.MaxBytesName, "max bytes"))
		}
		data := make([]byte, h.Size)
		if _, err := io.ReadFull(tr, data); err != nil {
			return nil, stream.explain(fmt.Errorf("reading %q: %w", p, err), lim)
		}
		total += h.Size
		files = append(files, File{Path: p, Data: data})
	}
	// After the end-of-archive blocks only zero padding may follow, and the
	// gzip stream must end cleanly (its checksum is checked at EOF).
	if err := drainZeros(stream); err != nil {
		return nil, stream.explain(err, lim)
	}
	return files, nil
}

// CleanPath checks a path from an archive or a caller and returns it
// without a leading "./". It must be relative and clean: no empty, "." or
// ".." segments, no backslashes or control characters, valid UTF-8, at most
// MaxPathLen bytes and MaxPathDepth segments.
func CleanPath(name string) (string, error) {
	p := name
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	switch {
	case p == "":
		return "", fmt.Errorf("%w: empty path %q", ErrUnsafe, name)
	case len(p) > MaxPathLen:
		return "", fmt.Errorf("%w: path %.40q... is over %d bytes", ErrUnsafe, p, MaxPathLen)
	case !utf8.ValidString(p):
		return "", fmt.Errorf("%w: path %q is not valid UTF-8", ErrUnsafe, p)
	case strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("%w: path %q is absolute", ErrUnsafe, name)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' || r == ':' && len(p) > 1 && p[1] == ':' {
			return "", fmt.Errorf("%w: path %q holds a control character, a backslash or a drive letter", ErrUnsafe, name)
		}
	}
	depth := 0
	for seg := range strings.SplitSeq(p, "/") {
		depth++
		switch seg {
		case "..":
			return "", fmt.Errorf("%w: path %q climbs out with '..'", ErrUnsafe, name)
		case "", ".":
			return "", fmt.Errorf("%w: path %q is not clean (empty or '.' segment)", ErrUnsafe, name)
		}
	}
	if depth > MaxPathDepth {
		return "", fmt.Errorf("%w: path %q is deeper than %d levels", ErrUnsafe, name, MaxPathDepth)
	}
	return p, nil
}

func kind(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symbolic link"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "FIFO"
	case tar.TypeGNUSparse:
		return "sparse file"
	default:
		return fmt.Sprintf("entry of type %q", t)
	}
}

func nameOr(name, fallback string) string {
	if name != "" {
		return name
	}
	return fallback
}

// drainZeros reads the rest of the stream, failing on a non-zero byte.
func drainZeros(r io.Reader) error {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		for _, b := range buf[:n] {
			if b != 0 {
				return errors.New("data after the end of the archive")
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// errStreamLimit is returned by cappedReader once its budget is spent.
var errStreamLimit = errors.New("decompressed stream over its limit")

// cappedReader fails once more than left bytes were read.
type cappedReader struct {
	r    io.Reader
	left int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// Probe for one more byte: exactly at the limit is fine.
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			return 0, errStreamLimit
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// explain turns a read error into one wrapping the package's sentinels.
func (c *cappedReader) explain(err error, lim Limits) error {
	switch {
	case errors.Is(err, errStreamLimit):
		return fmt.Errorf("%w: the decompressed stream is over %d bytes (content limit %d bytes, %s, plus headers)",
			ErrLimit, lim.StreamLimit(), lim.MaxBytes, nameOr(lim.MaxBytesName, "max bytes"))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: truncated stream: %v", ErrCorrupt, err)
	default:
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
}
