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
		{"::ffff:0:808:808", ""}, // IPv4-translated 8.8.8.8
		{"2a00:1450::1", ""},
		{"3fff:1000::1", ""}, // just outside the 3fff::/20 documentation block
		{"172.32.0.1", ""},   // just outside 172.16/12
		{"100.128.0.1", ""},  // just outside 100.64/10
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
		// RFC 6145 IPv4-translated addresses are unwrapped like the mapped form.
		{"::ffff:0:7f00:1", "loopback address ::ffff:0:7f00:1 (IPv4-translated form of 127.0.0.1)"},
		{"::ffff:0:a00:1", "private"},
		{"::ffff:0:a9fe:a9fe", "link-local"},
		{"::ffff:0:0:0", "unspecified"},
		// IPv6 outside global unicast 2000::/3 is refused even where no range names it.
		{"::1:2:3:4", "non-global address ::1:2:3:4"},
		{"::fffe:0:7f00:1", "non-global"},
		{"1::1", "non-global"},
		{"4000::1", "non-global"},
		{"5f00::1", "non-global"},
		{"e000::1", "non-global"},
		{"2001:db8::1", "reserved"},
		{"3fff::1", "reserved"},
		{"2001:4:112::1", "reserved"},
		{"192.88.99.1", "reserved"},
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

func FuzzCheckAddr(f *testing.F) {
	for _, s := range []string{"::ffff:0:7f00:1", "::ffff:127.0.0.1", "64:ff9b::a00:1", "2002:a00:1::", "2001::1", "2606:4700::1", "fe80::1", "::1", "4000::1"} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		err := CheckAddr(a)
		if a.Is4() {
			// IPv4 is checked through its mapped form too, with the same result.
			if (err == nil) != (CheckAddr(netip.AddrFrom16(a.As16())) == nil) {
				t.Fatalf("%s and its IPv4-mapped form disagree", a)
			}
			return
		}
		for _, e := range embedding {
			if e.prefix.Contains(a) {
				b := a.As16()
				v4 := netip.AddrFrom4([4]byte(b[e.offset : e.offset+4]))
				if (err == nil) != (CheckAddr(v4) == nil) {
					t.Fatalf("%s (%s form of %s) = %v, but %s = %v", a, e.name, v4, err, v4, CheckAddr(v4))
				}
				return
			}
		}
		// The IPv6 allow-list: nothing outside global unicast is reachable.
		if !globalUnicast.Contains(a) && err == nil {
			t.Fatalf("CheckAddr(%s) = nil outside %s", a, globalUnicast)
		}
	})
}
