package clientaddr

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"testing"

	"github.com/gofiber/fiber/v2"
)

func TestParse(t *testing.T) {
	tests := []struct {
		list    string
		trusted []string
		wantErr bool
	}{
		{"", nil, false},
		{" 10.0.0.0/8 , 127.0.0.1,::1 ", []string{"10.0.0.0/8", "127.0.0.1/32", "::1/128"}, false},
		{"10.1.2.3/8", []string{"10.0.0.0/8"}, false},
		{"::ffff:127.0.0.1", []string{"127.0.0.1/32"}, false},
		{"example.com", nil, true},
		{"10.0.0.0/33", nil, true},
	}
	for _, tt := range tests {
		r, err := Parse(tt.list)
		if (err != nil) != tt.wantErr {
			t.Errorf("Parse(%q) err = %v", tt.list, err)
			continue
		}
		var got []string
		for _, p := range r.trusted {
			got = append(got, p.String())
		}
		if len(got) != len(tt.trusted) {
			t.Errorf("Parse(%q) = %v, want %v", tt.list, got, tt.trusted)
			continue
		}
		for i := range got {
			if got[i] != tt.trusted[i] {
				t.Errorf("Parse(%q) = %v, want %v", tt.list, got, tt.trusted)
			}
		}
	}
}

// TestResolver_Of sends real requests over loopback, so the peer is
// 127.0.0.1, with forwarding headers a client or a proxy may write.
func TestResolver_Of(t *testing.T) {
	tests := []struct {
		name    string
		trusted string
		xff     []string
		want    string
	}{
		{"no proxy trusted: header ignored", "", []string{"203.0.113.9"}, "127.0.0.1"},
		{"trusted proxy, no header", "127.0.0.1", nil, "127.0.0.1"},
		{"trusted proxy", "127.0.0.1", []string{"203.0.113.9"}, "203.0.113.9"},
		{"client-written entries are skipped", "127.0.0.1", []string{"198.51.100.1, 203.0.113.9"}, "203.0.113.9"},
		{"chain of trusted proxies", "127.0.0.1,10.0.0.0/8", []string{"198.51.100.1, 203.0.113.9, 10.1.1.1, 10.2.2.2"}, "203.0.113.9"},
		{"several header lines", "127.0.0.1,10.0.0.0/8", []string{"198.51.100.1", "203.0.113.9, 10.1.1.1"}, "203.0.113.9"},
		{"garbled hop", "127.0.0.1,10.0.0.0/8", []string{"203.0.113.9, junk, 10.1.1.1"}, "10.1.1.1"},
		{"every hop trusted", "127.0.0.1,10.0.0.0/8", []string{"10.1.1.1"}, "10.1.1.1"},
		{"mapped IPv6", "127.0.0.1", []string{"::ffff:203.0.113.9"}, "203.0.113.9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Parse(tt.trusted)
			if err != nil {
				t.Fatal(err)
			}
			if got := serveOnce(t, r, tt.xff); got != tt.want {
				t.Fatalf("Of = %s, want %s", got, tt.want)
			}
		})
	}
}

func serveOnce(t *testing.T, r Resolver, xff []string) string {
	t.Helper()
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString(r.Of(c).String()) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln)
	defer app.Shutdown()
	req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/", nil)
	for _, v := range xff {
		req.Header.Add("X-Forwarded-For", v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

func TestKeyOf(t *testing.T) {
	tests := []struct{ addr, want string }{
		{"203.0.113.9", "203.0.113.9"},
		{"2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
	}
	for _, tt := range tests {
		if got := KeyOf(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("KeyOf(%s) = %s, want %s", tt.addr, got, tt.want)
		}
	}
	if got := KeyOf(netip.Addr{}); got != "unknown" {
		t.Errorf("KeyOf(invalid) = %s", got)
	}
}
