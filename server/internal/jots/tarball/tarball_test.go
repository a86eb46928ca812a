package tarball_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/server/internal/jots/tarball"
	"github.com/workbench-dev/workbench/server/internal/jots/tarball/tarballtest"
)

// build returns a gzip tarball of entries.
func build(t testing.TB, entries ...tarballtest.Entry) []byte {
	t.Helper()
	data, err := tarballtest.Build(entries...)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

type entry = tarballtest.Entry

var testLimits = tarball.Limits{MaxFiles: 1000, MaxBytes: 5 << 20, MaxFilesName: "JOTS_MAX_FILES", MaxBytesName: "JOTS_MAX_BYTES"}

func TestExtract_good(t *testing.T) {
	data := build(t,
		entry{Name: "./", Typeflag: tar.TypeDir},
		entry{Name: "./index.html", Body: "<h1>hi</h1>"},
		entry{Name: "css/", Typeflag: tar.TypeDir},
		entry{Name: "css/site.css", Body: "body{}"},
		entry{Name: "empty.txt"},
		entry{Name: "deep/" + strings.Repeat("a/", 20) + "x.json", Body: "{}"},
		entry{Name: "ünïcode.txt", Body: "ok"},
	)
	files, err := tarball.Extract(bytes.NewReader(data), testLimits)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"index.html", "css/site.css", "empty.txt", "deep/" + strings.Repeat("a/", 20) + "x.json", "ünïcode.txt"}
	if len(files) != len(want) {
		t.Fatalf("got %d files, want %d", len(files), len(want))
	}
	for i, f := range files {
		if f.Path != want[i] {
			t.Errorf("file %d = %q, want %q", i, f.Path, want[i])
		}
	}
	if string(files[0].Data) != "<h1>hi</h1>" || len(files[2].Data) != 0 {
		t.Errorf("contents: %q, %q", files[0].Data, files[2].Data)
	}
}

func manyFiles(n int) []entry { return tarballtest.Files(n) }

func TestExtract_hostile(t *testing.T) {
	good := build(t, entry{Name: "index.html", Body: strings.Repeat("hello ", 500)})
	tests := []struct {
		name    string
		data    []byte
		want    error
		mention string
	}{
		{"traversal", build(t, entry{Name: "../../etc/passwd", Body: "x"}), tarball.ErrUnsafe, "'..'"},
		{"inner traversal", build(t, entry{Name: "a/../../b", Body: "x"}), tarball.ErrUnsafe, "'..'"},
		{"traversal directory", build(t, entry{Name: "../up/", Typeflag: tar.TypeDir}), tarball.ErrUnsafe, "'..'"},
		{"absolute", build(t, entry{Name: "/etc/passwd", Body: "x"}), tarball.ErrUnsafe, "absolute"},
		{"backslash", build(t, entry{Name: `..\evil`, Body: "x"}), tarball.ErrUnsafe, "backslash"},
		{"double slash", build(t, entry{Name: "a//b", Body: "x"}), tarball.ErrUnsafe, "not clean"},
		{"control character", build(t, entry{Name: "a\nb", Body: "x"}), tarball.ErrUnsafe, "control"},
		{"symlink", build(t, entry{Name: "link", Typeflag: tar.TypeSymlink, Link: "/etc/passwd"}), tarball.ErrUnsafe, "symbolic link"},
		{"hard link", build(t, entry{Name: "index.html", Body: "x"}, entry{Name: "hard", Typeflag: tar.TypeLink, Link: "index.html"}), tarball.ErrUnsafe, "hard link"},
		{"character device", build(t, entry{Name: "null", Typeflag: tar.TypeChar}), tarball.ErrUnsafe, "character device"},
		{"block device", build(t, entry{Name: "sda", Typeflag: tar.TypeBlock}), tarball.ErrUnsafe, "block device"},
		{"fifo", build(t, entry{Name: "pipe", Typeflag: tar.TypeFifo}), tarball.ErrUnsafe, "FIFO"},
		{"case duplicate", build(t, entry{Name: "Index.html", Body: "a"}, entry{Name: "index.HTML", Body: "b"}), tarball.ErrDuplicate, "case"},
		{"exact duplicate", build(t, entry{Name: "a.txt", Body: "a"}, entry{Name: "./a.txt", Body: "b"}), tarball.ErrDuplicate, "a.txt"},
		{"1001 files", build(t, manyFiles(1001)...), tarball.ErrLimit, "JOTS_MAX_FILES"},
		{"one file over 5 MiB", build(t, entry{Name: "big.bin", Body: strings.Repeat("z", 5<<20+1)}), tarball.ErrLimit, "JOTS_MAX_BYTES"},
		{"files summing over 5 MiB", build(t, entry{Name: "a", Body: strings.Repeat("z", 3<<20)}, entry{Name: "b", Body: strings.Repeat("z", 3<<20)}), tarball.ErrLimit, "JOTS_MAX_BYTES"},
		{"truncated gzip", good[:len(good)/2], tarball.ErrCorrupt, "truncated"},
		{"truncated before the gzip trailer", good[:len(good)-4], tarball.ErrCorrupt, ""},
		{"not gzip", []byte("PK\x03\x04 a zip file"), tarball.ErrCorrupt, "gzip"},
		{"empty body", nil, tarball.ErrCorrupt, "gzip"},
		{"trailing garbage", append(slicesClone(good), "garbage"...), tarball.ErrCorrupt, ""},
		{"gzip of text", gz(t, []byte(strings.Repeat("not a tar archive\n", 100))), tarball.ErrCorrupt, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := tarball.Extract(bytes.NewReader(tt.data), testLimits)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Extract = %d files, %v; want %v", len(files), err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %q", err, tt.mention)
			}
		})
	}
	// Exactly at the limits is fine.
	files, err := tarball.Extract(bytes.NewReader(build(t, manyFiles(1000)...)), testLimits)
	if err != nil || len(files) != 1000 {
		t.Fatalf("1000 files: %d, %v", len(files), err)
	}
	files, err = tarball.Extract(bytes.NewReader(build(t, entry{Name: "five", Body: strings.Repeat("z", 5<<20)})), testLimits)
	if err != nil || len(files[0].Data) != 5<<20 {
		t.Fatalf("5 MiB file: %v", err)
	}
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }

func gz(t testing.TB, data []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestExtract_gzipBomb feeds 1 GiB bombs generated on the fly and
// checks that extraction fails at the limit having read only a sliver of
// the compressed input.
func TestExtract_gzipBomb(t *testing.T) {
	tests := []struct {
		name   string
		header bool
	}{
		{"one file declared 1 GiB", true},
		{"1 GiB of zero blocks", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bomb, size := tarballtest.Bomb(1<<30, tt.header)
			if size < 900<<10 || size > 2<<20 {
				t.Fatalf("bomb is %d compressed bytes; expected about 1 MiB for 1 GiB", size)
			}
			cr := &countingReader{r: bomb}
			_, err := tarball.Extract(cr, testLimits)
			if !errors.Is(err, tarball.ErrLimit) || !strings.Contains(err.Error(), "JOTS_MAX_BYTES") {
				t.Fatalf("Extract = %v, want the JOTS_MAX_BYTES limit", err)
			}
			// Stopped at the limit: the stream limit (about 7 MiB) is under
			// 1% of the bomb, so at most about 1% of its compressed bytes
			// may have been read (plus buffering).
			if limit := size/100 + 64<<10; cr.n > limit {
				t.Fatalf("read %d of %d compressed bytes before failing; want at most %d", cr.n, size, limit)
			}
		})
	}
}

func FuzzExtract(f *testing.F) {
	f.Add(build(f, entry{Name: "index.html", Body: "<p>x</p>"}, entry{Name: "a/b.txt", Body: "b"}))
	f.Add(build(f, entry{Name: "l", Typeflag: tar.TypeSymlink, Link: "../x"}))
	f.Add(build(f, entry{Name: "A", Body: "1"}, entry{Name: "a", Body: "2"}))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	small := tarball.Limits{MaxFiles: 8, MaxBytes: 4 << 10}
	f.Fuzz(func(t *testing.T, data []byte) {
		files, err := tarball.Extract(bytes.NewReader(data), small)
		if err != nil {
			if !errors.Is(err, tarball.ErrLimit) && !errors.Is(err, tarball.ErrUnsafe) && !errors.Is(err, tarball.ErrDuplicate) && !errors.Is(err, tarball.ErrCorrupt) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		if len(files) > small.MaxFiles {
			t.Fatalf("%d files over the limit", len(files))
		}
		var total int
		seen := map[string]bool{}
		for _, f := range files {
			total += len(f.Data)
			if p, err := tarball.CleanPath(f.Path); err != nil || p != f.Path {
				t.Fatalf("unclean path %q: %v", f.Path, err)
			}
			k := strings.ToLower(f.Path)
			if seen[k] {
				t.Fatalf("duplicate %q", f.Path)
			}
			seen[k] = true
		}
		if int64(total) > small.MaxBytes {
			t.Fatalf("%d bytes over the limit", total)
		}
	})
}
