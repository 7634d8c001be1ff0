package gitcmd

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestNeutraliseScopes(t *testing.T) {
	list := "global\x00credential.helper\nstore\x00" +
		"local\x00credential.helper\n!evil\x00" +
		"local\x00filter.A=b.clean\nevil\x00" +
		"worktree\x00core.sshCommand\nevil\x00" +
		"local\x00remote.origin.uploadpack\nevil\x00" +
		"local\x00core.gitproxy\nevil\x00" +
		"local\x00user.name\nx\x00"
	over := neutralise(list)
	has := func(o Override) bool { return slices.Contains(over, o) }
	for _, want := range []Override{
		{"core.fsmonitor", "false"}, {"core.hooksPath", "/dev/null"},
		{"credential.helper", ""}, {"filter.A=b.clean", ""}, {"core.sshCommand", "ssh"},
		{packsKey, "remote.origin.uploadpack"}, {"protocol.git.allow", "never"},
	} {
		if !has(want) {
			t.Errorf("missing %+v in %+v", want, over)
		}
	}
	for _, o := range over {
		if o.Key == "user.name" {
			t.Errorf("a key that runs nothing was overridden: %+v", o)
		}
	}
	env := WithOverrides([]string{"GIT_CONFIG_COUNT=2", "A=1"}, over)
	count := "GIT_CONFIG_COUNT=" + strconv.Itoa(2+len(over)-1) // the pseudo key is not given
	if !slices.Contains(env, "GIT_CONFIG_KEY_2=core.fsmonitor") || !slices.Contains(env, count) || !slices.Contains(env, "A=1") {
		t.Errorf("overrides do not follow the environment's own: %v", env)
	}
	for _, kv := range env {
		if strings.Contains(kv, packsKey) {
			t.Errorf("the pseudo key reached git: %q", kv)
		}
	}
	if args, err := pinPacks(over, []string{"fetch", "origin"}); err != nil || !slices.Equal(args, []string{"fetch", "--upload-pack=git-upload-pack", "origin"}) {
		t.Errorf("fetch = %v, %v", args, err)
	}
	if _, err := pinPacks(over, []string{"remote", "update"}); err == nil {
		t.Error("git remote update was not refused")
	}
}

// FuzzNeutralise: any configuration listing gives overrides without a
// panic, each for a key the listing named or a fixed one.
func FuzzNeutralise(f *testing.F) {
	f.Add("local\x00filter.x.clean\nevil\x00")
	f.Add("local\x00core.fsmonitor\x00worktree")
	f.Add("\x00\x00\n")
	f.Fuzz(func(t *testing.T, list string) {
		for _, o := range neutralise(list) {
			if o.Key == "" {
				t.Fatalf("empty key from %q", list)
			}
		}
	})
}

func TestCommandArgs(t *testing.T) {
	r := Runner{Env: Environ(nil)}
	cases := []struct{ in, want []string }{
		{[]string{"--no-optional-locks", "status", "--short"}, []string{"--no-pager", "--no-optional-locks", "status", "--ignore-submodules=dirty", "--short"}},
		{[]string{"status", "--ignore-submodules=all"}, []string{"--no-pager", "status", "--ignore-submodules=all"}},
		{[]string{"diff", "--name-only", "a", "b", "--"}, []string{"--no-pager", "diff", "--no-ext-diff", "--no-textconv", "--name-only", "a", "b", "--"}},
		{[]string{"log", "-1"}, []string{"--no-pager", "log", "--no-ext-diff", "--no-textconv", "-1"}},
		{[]string{"rev-parse", "HEAD"}, []string{"--no-pager", "rev-parse", "HEAD"}},
	}
	for _, c := range cases {
		cmd := r.command(t.Context(), "/", nil, c.in)
		if got := cmd.Args[1:]; !slices.Equal(got, c.want) {
			t.Errorf("%v: args %v, want %v", c.in, got, c.want)
		}
	}
}
