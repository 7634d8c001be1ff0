package builtin

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"
)

func TestPublicAddr(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "1.1.1.1": true, "2606:4700::1111": true, "151.101.1.69": true,
		"127.0.0.1": false, "127.8.9.10": false, "::1": false,
		"10.0.0.1": false, "172.16.5.4": false, "192.168.1.1": false, "fd12::1": false,
		"169.254.169.254": false, "fe80::1": false,
		"0.0.0.0": false, "::": false, "0.1.2.3": false,
		"100.64.0.1": false, "198.18.0.1": false, "224.0.0.1": false, "255.255.255.255": false,
		"::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "::ffff:8.8.8.8": true,
	} {
		if got := publicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}

// TestGuardedDialer: the check is made on the address actually dialled,
// so a host name that resolves to loopback is refused like the literal.
func TestGuardedDialer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	for _, tc := range []struct {
		host    string
		allowed string
		ok      bool
	}{
		{"127.0.0.1", "", false},
		{"localhost", "", false},
		{"localhost", "127.0.0.1", false}, // the rule names another host
		{"localhost", "localhost", true},
		{"127.0.0.1", "127.0.0.1", true},
	} {
		d := guardedDialer{timeout: 5 * time.Second, allowPrivate: func(h string) bool { return h == tc.allowed }}
		c, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort(tc.host, port))
		if c != nil {
			c.Close()
		}
		var pe *privateAddrError
		if tc.ok && err != nil || !tc.ok && !errors.As(err, &pe) {
			t.Errorf("dial %s (allowed %q): err = %v", tc.host, tc.allowed, err)
		}
	}
}
