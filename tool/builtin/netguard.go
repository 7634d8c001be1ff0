package builtin

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// This file keeps WebFetch out of the user's own network: a page cannot
// be fetched from a loopback, private, link-local or otherwise
// non-public address unless a permission rule names its host. The check
// runs at connect time, on the address actually dialled, so neither a
// redirect nor a DNS answer that changes between checks (rebinding) can
// get around it.

// nonPublic are the address ranges WebFetch refuses by default, beyond
// what netip classifies (loopback, private, link-local, multicast,
// unspecified).
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // carrier-grade NAT, shared address space
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, broadcast
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("fec0::/10"),      // deprecated site-local
}

// publicAddr reports whether ip is an ordinary public unicast address.
func publicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// isLoopbackHost reports whether a URL host names this machine: localhost
// or a loopback literal.
func isLoopbackHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(h, "[]"))
	return err == nil && ip.Unmap().IsLoopback()
}

// guardedDialer dials only public addresses, unless allowPrivate says the
// host being dialled may reach non-public ones.
type guardedDialer struct {
	timeout      time.Duration
	allowPrivate func(host string) bool
}

// DialContext connects to addr (host:port), checking every address the
// host resolves to as it is dialled.
func (g guardedDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	allowed := g.allowPrivate != nil && g.allowPrivate(host)
	d := &net.Dialer{
		Timeout: g.timeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("unexpected address %q", address)
			}
			if !allowed && !publicAddr(ap.Addr()) {
				return &privateAddrError{host: host, addr: ap.Addr().Unmap()}
			}
			return nil
		},
	}
	return d.DialContext(ctx, network, addr)
}

// privateAddrError is a refused connection to a non-public address.
type privateAddrError struct {
	host string
	addr netip.Addr
}

func (e *privateAddrError) Error() string {
	return fmt.Sprintf("%s resolves to %s, a loopback, private or link-local address", e.host, e.addr)
}
