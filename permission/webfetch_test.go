package permission

import "testing"

func TestAllowsPrivateHost(t *testing.T) {
	t.Parallel()
	rules := func(rs ...string) []Rule {
		var out []Rule
		for _, s := range rs {
			b, text, _ := cutBehavior(s)
			r, err := ParseRule(text)
			if err != nil {
				t.Fatal(err)
			}
			r.Behavior = b
			out = append(out, r)
		}
		return out
	}
	for _, tc := range []struct {
		rules []string
		host  string
		want  bool
	}{
		{nil, "127.0.0.1", false},
		{[]string{"allow WebFetch"}, "127.0.0.1", false}, // must name the host
		{[]string{"allow WebFetch(domain:127.0.0.1)"}, "127.0.0.1", true},
		{[]string{"allow WebFetch(domain:127.0.0.1)"}, "127.0.0.2", false},
		{[]string{"allow WebFetch(domain:localhost)"}, "localhost", true},
		{[]string{"allow WebFetch(domain:*.corp.example)"}, "wiki.corp.example", true},
		{[]string{"allow WebFetch(domain:::1)"}, "::1", true},
		{[]string{"allow WebFetch(domain:127.0.0.1)", "deny WebFetch(domain:127.0.0.1)"}, "127.0.0.1", false},
		{[]string{"allow WebFetch(domain:127.0.0.1)", "deny WebFetch"}, "127.0.0.1", false},
		{[]string{"allow Bash(domain:127.0.0.1)"}, "127.0.0.1", false},
	} {
		c, err := NewChecker(Config{Rules: rules(tc.rules...)})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.AllowsPrivateHost(tc.host); got != tc.want {
			t.Errorf("rules %v host %s: got %v, want %v", tc.rules, tc.host, got, tc.want)
		}
	}
}

// cutBehavior splits "allow X" into its behaviour and rule text.
func cutBehavior(s string) (Behavior, string, bool) {
	for _, b := range []Behavior{Allow, Ask, Deny} {
		if rest, ok := cutPrefixWord(s, string(b)); ok {
			return b, rest, true
		}
	}
	return Allow, s, false
}

func cutPrefixWord(s, w string) (string, bool) {
	if len(s) > len(w) && s[:len(w)] == w && s[len(w)] == ' ' {
		return s[len(w)+1:], true
	}
	return "", false
}
