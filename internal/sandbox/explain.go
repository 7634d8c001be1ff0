package sandbox

import (
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/prompts"
)

// maxNotes bounds the notes Explain adds to one result.
const maxNotes = 4

var (
	// quotedPath finds 'path' or "path" in an error line; barePath the
	// word before ": <error>".
	quotedPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`['"‘“]([^'"’”]+)['"’”]`) })
	barePath   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:^|\s)(\S+?):\s*(?:Read-only file system|Permission denied|No such file or directory|Device or resource busy)`)
	})
	hostRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:resolve host:?|connect to|host)\s+['"]?([A-Za-z0-9.\-:\[\]]+)`)
	})
)

// networkErrors are texts programs print when a connection cannot be
// made; with the network cut, the sandbox is the likely cause.
var networkErrors = []string{
	"Could not resolve host", "Temporary failure in name resolution", "Name or service not known",
	"Network is unreachable", "getaddrinfo", "Failed to connect to", "Couldn't connect to server",
	"Connection refused", "No address associated with hostname", "nodename nor servname",
	"ENETUNREACH", "EAI_AGAIN", "ECONNREFUSED", "network is unreachable", "no such host",
}

// Explain returns notes for a command's output that show the sandbox
// refused something — a write outside the writable places, a read of a
// masked path, a connection with the network cut — so the model knows
// why and does not guess. "" when nothing points at the sandbox.
func (s *Sandbox) Explain(p Policy, output string) string {
	var notes []string
	seen := map[string]bool{}
	note := func(n string) {
		if !seen[n] && len(notes) < maxNotes {
			seen[n] = true
			notes = append(notes, n)
		}
	}
	network := false
	for _, line := range strings.Split(output, "\n") {
		switch {
		case strings.Contains(line, "Read-only file system"):
			path := s.resolve(p, linePath(line))
			switch {
			case path != "" && s.under(path, p.Hidden):
				note(prompts.SandboxMaskedWrite(path))
			case path != "" && s.under(path, p.ReadOnly):
				note(prompts.SandboxReadOnlyPath(path))
			case path != "" && s.under(path, s.protected(p)):
				note(prompts.SandboxProtectedPath(path))
			case path != "":
				note(prompts.SandboxWriteRefused(path, s.writableText(p)))
			default:
				note(prompts.SandboxWriteRefused("", s.writableText(p)))
			}
		case strings.Contains(line, "Device or resource busy"):
			// A file replaced by rename (git's lock files) where a
			// read-only mount sits.
			path := s.resolve(p, linePath(line))
			switch {
			case path == "":
			case s.under(path, p.ReadOnly):
				note(prompts.SandboxReadOnlyPath(path))
			case s.under(path, s.protected(p)):
				note(prompts.SandboxProtectedPath(path))
			}
		case strings.Contains(line, "Permission denied") || strings.Contains(line, "No such file or directory"):
			path := s.resolve(p, linePath(line))
			switch {
			case path == "":
			case s.under(path, p.Hidden):
				note(prompts.SandboxMaskedRead(path))
			case s.under(path, []string{"/tmp"}) && !s.under(path, s.writable(p)):
				note(prompts.SandboxPrivateTmp(path))
			}
		case !s.cfg.Network && !network && containsAny(line, networkErrors):
			network = true
			what := "network access"
			if m := hostRE().FindStringSubmatch(line); m != nil {
				what = "the connection to " + strings.TrimRight(m[1], ".:")
			}
			note(prompts.SandboxNetworkOff(what))
		}
	}
	return strings.Join(notes, "\n")
}

// linePath returns the path an error line names, or "".
func linePath(line string) string {
	if m := quotedPath().FindStringSubmatch(line); m != nil {
		return m[1]
	}
	if m := barePath().FindStringSubmatch(line); m != nil {
		return strings.TrimSuffix(m[1], ":")
	}
	return ""
}

// resolve makes a path from an error line absolute against the command's
// working directory.
func (s *Sandbox) resolve(p Policy, path string) string {
	if path == "" {
		return ""
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.Cwd, path)
	}
	return filepath.Clean(path)
}

// under reports whether path is one of roots or below one.
func (s *Sandbox) under(path string, roots []string) bool {
	for _, r := range roots {
		if path == r || strings.HasPrefix(path, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}

func (s *Sandbox) writableText(p Policy) string {
	places := append([]string{p.Cwd}, p.Dirs...)
	places = append(places, "/tmp")
	if len(s.cfg.Writable) > 0 {
		places = append(places, "the tool caches")
	}
	return strings.Join(places, ", ")
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
