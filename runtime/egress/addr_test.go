package egress

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/failure"
)

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr string
		want string // "" means allowed; otherwise a substring of the reason
	}{
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"140.82.112.3", ""},
		{"2606:4700:4700::1111", ""},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", ""}, // NAT64 of 8.8.8.8
		{"2002:808:808::1", ""},  // 6to4 of 8.8.8.8
		{"172.32.0.1", ""},       // just outside 172.16/12
		{"100.128.0.1", ""},      // just outside 100.64/10
		{"11.0.0.1", ""},

		{"127.0.0.1", "loopback address 127.0.0.1"},
		{"127.255.255.254", "loopback"},
		{"::1", "loopback address ::1"},
		{"10.0.0.1", "private address 10.0.0.1"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"fc00::1", "private"},
		{"fd12:3456::1", "private"},
		{"fec0::1", "private"},
		{"169.254.169.254", "link-local address 169.254.169.254"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"ff02::1", "multicast"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"::", "unspecified"},
		{"100.64.0.1", "CGNAT"},
		{"100.127.255.255", "CGNAT"},
		{"255.255.255.255", "broadcast"},
		{"240.0.0.1", "reserved"},
		{"198.18.0.1", "reserved"},
		{"192.0.0.8", "reserved"},
		{"::a00:1", "reserved"}, // IPv4-compatible form of 10.0.0.1
		{"2001::1", "reserved"}, // Teredo
		{"64:ff9b:1::a00:1", "reserved"},
		{"::ffff:127.0.0.1", "loopback address ::ffff:127.0.0.1 (IPv4-mapped form of 127.0.0.1)"},
		{"::ffff:10.0.0.1", "private"},
		{"::ffff:169.254.169.254", "link-local"},
		{"::ffff:0.0.0.0", "unspecified"},
		{"64:ff9b::a00:1", "private address 64:ff9b::a00:1 (NAT64 form of 10.0.0.1)"},
		{"64:ff9b::7f00:1", "loopback"},
		{"64:ff9b::a9fe:a9fe", "link-local"},
		{"2002:a00:1::", "private address 2002:a00:1:: (6to4 form of 10.0.0.1)"},
		{"2002:7f00:1::1", "loopback"},
		{"2002:a9fe:a9fe::", "link-local"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			err := CheckAddr(netip.MustParseAddr(tt.addr))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckAddr(%s) = %v, want nil", tt.addr, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CheckAddr(%s) = %v, want error containing %q", tt.addr, err, tt.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.Code != failure.EgressDenied || !errors.Is(err, ErrDenied) {
				t.Fatalf("CheckAddr(%s) error is not an EGRESS_DENIED *Error: %#v", tt.addr, err)
			}
		})
	}
	if err := CheckAddr(netip.Addr{}); err == nil {
		t.Fatal("CheckAddr(zero Addr) = nil")
	}
}

func TestError_Is(t *testing.T) {
	cause := errors.New("root")
	tests := []struct {
		err        *Error
		wantDenied bool
	}{
		{newError(failure.EgressDenied, "x", nil), true},
		{newError(failure.UpstreamTimeout, "x", cause), false},
		{newError(failure.InvalidRequest, "x", nil), false},
	}
	for _, tt := range tests {
		wrapped := errors.Join(errors.New("outer"), tt.err)
		if errors.Is(wrapped, ErrDenied) != tt.wantDenied {
			t.Errorf("errors.Is(%v, ErrDenied) = %v", tt.err, !tt.wantDenied)
		}
		if tt.err.Error() != string(tt.err.Code)+": x" {
			t.Errorf("Error() = %q", tt.err.Error())
		}
	}
	if !errors.Is(newError(failure.UpstreamTimeout, "x", cause), cause) {
		t.Error("Unwrap does not reach the cause")
	}
}
