package egress

import (
	"fmt"
	"net/netip"

	"github.com/workbench-dev/workbench/failure"
)

// blockedRange is one address range no plugin may reach, with the word used
// in error messages.
type blockedRange struct {
	prefix netip.Prefix
	kind   string
}

// blockedRanges are refused outright, most specific first. IPv6 forms that
// embed an IPv4 address (mapped, translated, NAT64, 6to4) are unwrapped and
// checked separately; an IPv6 address outside globalUnicast that no range
// names is refused too.
var blockedRanges = []blockedRange{
	{netip.MustParsePrefix("fd00:ec2::254/128"), "metadata"},  // AWS instance metadata over IPv6
	{netip.MustParsePrefix("100.100.100.200/32"), "metadata"}, // Alibaba Cloud instance metadata
	{netip.MustParsePrefix("192.0.0.192/32"), "metadata"},     // Oracle Cloud instance metadata
	{netip.MustParsePrefix("168.63.129.16/32"), "metadata"},   // Azure WireServer
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("fc00::/7"), "private"},
	{netip.MustParsePrefix("fec0::/10"), "private"}, // deprecated site-local
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	{netip.MustParsePrefix("100.64.0.0/10"), "CGNAT"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},    // IETF protocol assignments
	{netip.MustParsePrefix("192.88.99.0/24"), "reserved"},  // deprecated 6to4 relay anycast
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},   // benchmarking, often used internally
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved"},    // documentation
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved"}, // documentation
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved"},  // documentation
	{netip.MustParsePrefix("::/96"), "reserved"},           // deprecated IPv4-compatible IPv6
	{netip.MustParsePrefix("100::/64"), "reserved"},        // discard-only
	{netip.MustParsePrefix("2001:db8::/32"), "reserved"},   // documentation
	{netip.MustParsePrefix("3fff::/20"), "reserved"},       // documentation
	{netip.MustParsePrefix("2001::/32"), "reserved"},       // Teredo tunnels reach hosts behind NATs
	{netip.MustParsePrefix("2001::/23"), "reserved"},       // IETF protocol assignments
	{netip.MustParsePrefix("64:ff9b:1::/48"), "reserved"},  // local-use NAT64, network-specific layout
}

// alwaysRefused are the kinds of address no exemption lifts (Policy.Internal):
// no operator's service lives there, and cloud metadata services do
// (169.254.169.254 is link-local).
var alwaysRefused = map[string]bool{"invalid": true, "unspecified": true, "link-local": true, "metadata": true, "multicast": true, "broadcast": true}

// globalUnicast is the IPv6 allow-list: the only IPv6 space allocated for
// global unicast (RFC 4291). Everything outside it is loopback, local,
// multicast, an embedding form or unallocated.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// embedding are IPv6 ranges that carry an IPv4 address, and where it sits.
var embedding = []struct {
	prefix netip.Prefix
	offset int // byte offset of the IPv4 address in the IPv6 address
	name   string
}{
	{netip.MustParsePrefix("::ffff:0:0/96"), 12, "IPv4-mapped"},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), 12, "IPv4-translated"}, // RFC 6145
	{netip.MustParsePrefix("64:ff9b::/96"), 12, "NAT64"},
	{netip.MustParsePrefix("2002::/16"), 2, "6to4"},
}

// CheckAddr applies the address rule alone: it returns an *Error with code
// EGRESS_DENIED when a is loopback, private, link-local, a cloud metadata
// address, multicast, unspecified, CGNAT, reserved or broadcast, an IPv6 address embedding such
// an IPv4 address (IPv4-mapped, IPv4-translated, NAT64, 6to4), or an IPv6
// address outside global unicast 2000::/3. It returns nil for an address a
// plugin may reach.
func CheckAddr(a netip.Addr) error {
	if _, reason := refusal(a); reason != "" {
		return newError(failure.EgressDenied, "refused "+reason, nil)
	}
	return nil
}

// refusal returns the kind of a refused address (a key of alwaysRefused or
// another word such as "private") and why it is refused, such as "private
// address 10.0.0.1"; both are "" when a is allowed.
func refusal(a netip.Addr) (kind, reason string) {
	if !a.IsValid() {
		return "invalid", "invalid address"
	}
	a = a.WithZone("")
	for _, e := range embedding {
		if !e.prefix.Contains(a) {
			continue
		}
		b := a.As16()
		v4 := netip.AddrFrom4([4]byte(b[e.offset : e.offset+4]))
		if kind := blockedKind(v4); kind != "" {
			return kind, fmt.Sprintf("%s address %s (%s form of %s)", kind, a, e.name, v4)
		}
		return "", ""
	}
	if kind := blockedKind(a); kind != "" {
		return kind, fmt.Sprintf("%s address %s", kind, a)
	}
	if a.Is6() && !globalUnicast.Contains(a) {
		return "non-global", fmt.Sprintf("non-global address %s", a)
	}
	return "", ""
}

func blockedKind(a netip.Addr) string {
	for _, r := range blockedRanges {
		if r.prefix.Contains(a) {
			return r.kind
		}
	}
	return ""
}
