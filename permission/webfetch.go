package permission

import (
	"net"
	"strings"
)

// AllowsPrivateHost reports whether an allow rule `WebFetch(domain:…)`
// names host (exactly, or by a `*.` wildcard) and no deny rule on WebFetch
// covers it. WebFetch refuses loopback, private and link-local addresses
// unless this holds for the host it dials: a bare `WebFetch` allow rule is
// not enough, the rule must name the host.
func (c *Checker) AllowsPrivateHost(host string) bool {
	u := "http://" + host
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil && ip.To4() == nil {
		u = "http://[" + strings.Trim(host, "[]") + "]"
	}
	named := func(r Rule) bool {
		d, ok := strings.CutPrefix(r.Content, "domain:")
		return ok && hostMatches(d, u)
	}
	if c.firstMatch(Deny, "WebFetch", named) != nil { // whole-tool deny rules match too
		return false
	}
	for _, r := range c.rulesFor(Allow, "WebFetch") {
		if named(r) {
			return true
		}
	}
	return false
}
