package sandbox

import (
	"strings"
	"testing"
)

func TestExplain(t *testing.T) {
	t.Parallel()
	s := &Sandbox{cfg: Config{Writable: []string{"/home/u/.cache/go-build"}}}
	p := Policy{Cwd: "/repo", Dirs: []string{"/data"}, Hidden: []string{"/repo/secrets", "/repo/.env"}, ReadOnly: []string{"/repo/locked"}}
	cases := []struct{ output, want string }{
		{"touch: cannot touch '/etc/x': Read-only file system", "the write to /etc/x was refused; commands may write only in /repo, /data, /tmp, the tool caches"},
		{"bash: /usr/local/bin/x: Read-only file system", "the write to /usr/local/bin/x was refused"},
		{"OSError: [Errno 30] Read-only file system: '/opt/y'", "the write to /opt/y was refused"},
		{"mkdir: cannot create directory ‘/srv/z’: Read-only file system", "the write to /srv/z was refused"},
		{"cat: secrets/key.txt: No such file or directory", "/repo/secrets/key.txt is masked"},
		{"cat: .env: Permission denied", "/repo/.env is masked"},
		{"sh: 1: cannot create locked/a: Read-only file system", "/repo/locked/a is read-only here"},
		{"bash: locked/a: Read-only file system", "/repo/locked/a is read-only here"},
		{"cat: /tmp/build.log: No such file or directory", "/tmp is private"},
		{"cat: missing.txt: No such file or directory", ""},
		{"curl: (6) Could not resolve host: example.com", "network access is off for Bash commands, so the connection to example.com was refused"},
		{"curl: (7) Failed to connect to 127.0.0.1 port 8080 after 0 ms: Couldn't connect to server", "the connection to 127.0.0.1 was refused"},
		{"all good", ""},
	}
	for _, c := range cases {
		got := s.Explain(p, c.output)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("Explain(%q) = %q, want %q", c.output, got, c.want)
		}
	}
	on := &Sandbox{cfg: Config{Network: true}}
	if got := on.Explain(p, "curl: (6) Could not resolve host: example.com"); got != "" {
		t.Errorf("network on: a network error is not the sandbox's doing: %q", got)
	}
	many := strings.Repeat("touch: cannot touch '/etc/a': Read-only file system\ntouch: cannot touch '/etc/b': Read-only file system\n", 10) +
		"touch: cannot touch '/etc/c': Read-only file system\ntouch: cannot touch '/etc/d': Read-only file system\ntouch: cannot touch '/etc/e': Read-only file system\n"
	if n := strings.Count(s.Explain(p, many), "\n") + 1; n != maxNotes {
		t.Errorf("notes = %d, want at most %d, each once", n, maxNotes)
	}
}
