package tarballtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
)

// Entry is one tar record. A zero Typeflag is a regular file holding Body.
type Entry struct {
	Name     string
	Typeflag byte
	Body     string
	Link     string
}

// Build returns a gzip tarball of entries, written as given: no check of
// names or types, so it can build what an attacker would.
func Build(entries ...Entry) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		tf := e.Typeflag
		if tf == 0 {
			tf = tar.TypeReg
		}
		h := &tar.Header{Name: e.Name, Typeflag: tf, Mode: 0o644, Linkname: e.Link, Format: tar.FormatPAX}
		if tf == tar.TypeReg {
			h.Size = int64(len(e.Body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("tarballtest: %s: %w", e.Name, err)
		}
		if tf == tar.TypeReg {
			if _, err := io.WriteString(tw, e.Body); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Files returns n small regular files f0000.txt, f0001.txt, ...
func Files(n int) []Entry {
	out := make([]Entry, n)
	for i := range out {
		out[i] = Entry{Name: fmt.Sprintf("f%04d.txt", i), Body: "x"}
	}
	return out
}

// chunk is the decompressed size of one repeated gzip member.
const chunk = 1 << 20

// Bomb returns a gzip tarball that decompresses to size bytes (a multiple
// of 1 MiB) without ever holding them, and its compressed size (about
// size/1000). With header, the first MiB starts with a tar header that
// declares one file of size-1 MiB bytes; without, the stream is only zero
// blocks (an empty archive followed by a gigantic run of padding). The rest
// is one gzip member of 1 MiB of zeros repeated: gzip readers join
// members, so it is one valid stream.
func Bomb(size int64, header bool) (io.Reader, int64) {
	var head bytes.Buffer
	if header {
		tw := tar.NewWriter(&head)
		// The header is valid by construction; Flush writes nothing more.
		_ = tw.WriteHeader(&tar.Header{Name: "bomb.bin", Typeflag: tar.TypeReg, Mode: 0o644, Size: size - chunk, Format: tar.FormatPAX})
		_ = tw.Flush()
	}
	first := make([]byte, chunk)
	copy(first, head.Bytes())
	firstMember, zeros := member(first), member(make([]byte, chunk))
	parts := []io.Reader{bytes.NewReader(firstMember)}
	total := int64(len(firstMember))
	for range size/chunk - 1 {
		parts = append(parts, bytes.NewReader(zeros))
		total += int64(len(zeros))
	}
	return io.MultiReader(parts...), total
}

func member(data []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level
	_, _ = zw.Write(data)                                    // writes to a bytes.Buffer do not fail
	_ = zw.Close()
	return buf.Bytes()
}
