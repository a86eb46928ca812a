package main

import (
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestGhContent_out(t *testing.T) {
	// wrap splits base64 into 60-character lines as GitHub does.
	wrap := func(raw []byte) string {
		enc := base64.StdEncoding.EncodeToString(raw)
		var lines []string
		for len(enc) > 60 {
			lines = append(lines, enc[:60])
			enc = enc[60:]
		}
		return strings.Join(append(lines, enc), "\n") + "\n"
	}
	big := strings.Repeat("€", maxContentBytes/3+10) // 3 bytes each: the cap falls inside a rune
	tests := []struct {
		name          string
		in            ghContent
		wantContent   string
		wantTruncated bool
		wantBinary    bool
		wantErr       bool
	}{
		{name: "text file", in: ghContent{Type: "file", Encoding: "base64", Size: 12, Content: wrap([]byte("hello\nworld\n"))},
			wantContent: "hello\nworld\n"},
		{name: "long text is cut on a rune boundary", in: ghContent{Type: "file", Encoding: "base64", Size: int64(len(big)), Content: wrap([]byte(big))},
			wantContent: big[:maxContentBytes/3*3], wantTruncated: true},
		{name: "binary", in: ghContent{Type: "file", Encoding: "base64", Size: 4, Content: wrap([]byte{0xff, 0xfe, 0x00, 0x01})},
			wantBinary: true},
		{name: "too large for GitHub", in: ghContent{Type: "file", Encoding: "none", Size: 5 << 20}, wantTruncated: true},
		{name: "symlink", in: ghContent{Type: "symlink", Target: "../x"}},
		{name: "bad base64", in: ghContent{Type: "file", Encoding: "base64", Size: 3, Content: "!!!"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.out()
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if got.Content != tt.wantContent || got.Truncated != tt.wantTruncated || got.Binary != tt.wantBinary {
				t.Errorf("out = content %d bytes, truncated %v, binary %v; want %d bytes, %v, %v",
					len(got.Content), got.Truncated, got.Binary, len(tt.wantContent), tt.wantTruncated, tt.wantBinary)
			}
			if !utf8.ValidString(got.Content) || len(got.Content) > maxContentBytes {
				t.Errorf("content is %d bytes, valid UTF-8 %v", len(got.Content), utf8.ValidString(got.Content))
			}
		})
	}
}
