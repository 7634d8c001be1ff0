package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/sandbox"
)

// The sandbox keys under workspace trust (S-10.4): a workspace file may
// always confine more — turn the sandbox on, widen it to every agent, cut
// the network, make an unavailable sandbox an error — but what loosens it
// applies only in a trusted workspace, and is otherwise reported.
func TestSandboxSettingsTrust(t *testing.T) {
	t.Parallel()
	type want struct {
		on, bgOnly, noNet, fail bool
		writable                []string // besides the tool caches; CWD is the project
	}
	cases := []struct {
		name          string
		user, project string
		local         string // .cadre/settings.local.json
		flag          bool   // --sandbox
		trusted       bool
		want          want
		ignored       []string
	}{
		{name: "off by default", want: want{}},
		{name: "user turns it on", user: `{"sandbox": {"enabled": true}}`, want: want{on: true}},
		{name: "flag turns it on", flag: true, want: want{on: true}},
		{name: "flag confines every agent", user: `{"sandbox": {"enabled": true, "backgroundOnly": true}}`, flag: true, want: want{on: true}},
		{name: "project turns it on", project: `{"sandbox": {"enabled": true}}`, want: want{on: true}},
		{name: "project turns it on for background agents", project: `{"sandbox": {"enabled": true, "backgroundOnly": true}}`, want: want{on: true, bgOnly: true}},
		{name: "project widens it to every agent", user: `{"sandbox": {"enabled": true, "backgroundOnly": true}}`, project: `{"sandbox": {"backgroundOnly": false}}`, want: want{on: true}},
		{name: "project cannot turn it off", user: `{"sandbox": {"enabled": true}}`, project: `{"sandbox": {"enabled": false}}`,
			want: want{on: true}, ignored: []string{"sandbox.enabled false"}},
		{name: "local file cannot turn it off", user: `{"sandbox": {"enabled": true}}`, local: `{"sandbox": {"enabled": false}}`,
			want: want{on: true}, ignored: []string{"sandbox.enabled false"}},
		{name: "trusted project turns it off", user: `{"sandbox": {"enabled": true}}`, project: `{"sandbox": {"enabled": false}}`, trusted: true, want: want{}},
		{name: "project cannot limit it to background agents", user: `{"sandbox": {"enabled": true}}`, project: `{"sandbox": {"backgroundOnly": true}}`,
			want: want{on: true}, ignored: []string{"sandbox.backgroundOnly true"}},
		{name: "project backgroundOnly while off would limit a later file", project: `{"sandbox": {"backgroundOnly": true}}`, flag: false,
			want: want{}, ignored: []string{"sandbox.backgroundOnly true"}},
		{name: "trusted project limits it to background agents", user: `{"sandbox": {"enabled": true}}`, project: `{"sandbox": {"backgroundOnly": true}}`, trusted: true,
			want: want{on: true, bgOnly: true}},
		{name: "project cuts the network", user: `{"sandbox": {"enabled": true}}`, project: `{"sandbox": {"network": {"enabled": false}}}`, want: want{on: true, noNet: true}},
		{name: "project allowedDomains cuts the network", project: `{"sandbox": {"enabled": true, "network": {"allowedDomains": ["github.com"]}}}`, want: want{on: true, noNet: true}},
		{name: "project cannot turn the network back on", user: `{"sandbox": {"enabled": true, "network": {"enabled": false}}}`, project: `{"sandbox": {"network": {"enabled": true}}}`,
			want: want{on: true, noNet: true}, ignored: []string{"sandbox.network.enabled true"}},
		{name: "trusted project turns the network back on", user: `{"sandbox": {"enabled": true, "network": {"enabled": false}}}`, project: `{"sandbox": {"network": {"enabled": true}}}`, trusted: true,
			want: want{on: true}},
		{name: "project makes it required", project: `{"sandbox": {"enabled": true, "failIfUnavailable": true}}`, want: want{on: true, fail: true}},
		{name: "project cannot make it optional", user: `{"sandbox": {"enabled": true, "failIfUnavailable": true}}`, project: `{"sandbox": {"failIfUnavailable": false}}`,
			want: want{on: true, fail: true}, ignored: []string{"sandbox.failIfUnavailable false"}},
		{name: "project writable paths outside the workspace", project: `{"sandbox": {"enabled": true, "filesystem": {"allowWrite": ["/opt/out", "build", "~/.kube"]}}}`,
			want: want{on: true, writable: []string{"CWD/build"}}, ignored: []string{`sandbox.filesystem.allowWrite "/opt/out"`, `sandbox.filesystem.allowWrite "~/.kube"`}},
		{name: "trusted project writable paths", project: `{"sandbox": {"enabled": true, "filesystem": {"allowWrite": ["/opt/out", "build"]}}}`, trusted: true,
			want: want{on: true, writable: []string{"/opt/out", "CWD/build"}}},
		{name: "user writable paths", user: `{"sandbox": {"enabled": true, "filesystem": {"allowWrite": ["~/.kube"]}}}`,
			want: want{on: true, writable: []string{"HOME/.kube"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{"CWD/build/.keep": ""}
			for name, body := range map[string]string{"HOME/.config/cadre/settings.json": tc.user, "CWD/.cadre/settings.json": tc.project, "CWD/.cadre/settings.local.json": tc.local} {
				if body != "" {
					files[name] = body
				}
			}
			cfg, diags, err, tr := loadIn(t, files, anthropicKey, Options{TrustProject: tc.trusted, Sandbox: tc.flag})
			if err != nil {
				t.Fatal(err)
			}
			sb := cfg.Sandbox
			if (sb != nil) != tc.want.on {
				t.Fatalf("sandbox %+v, want on=%v (diags %v)", sb, tc.want.on, diags)
			}
			if sb != nil {
				got := want{on: true, bgOnly: sb.BackgroundOnly, noNet: sb.NoNetwork, fail: sb.FailIfUnavailable}
				caches := sandbox.DefaultWritable(envOf(map[string]string{"HOME": tr.home}))
				for _, w := range sb.Writable {
					if !slices.Contains(caches, w) {
						got.writable = append(got.writable, w)
					}
				}
				wantW := tc.want
				wantW.writable = nil
				for _, w := range tc.want.writable {
					wantW.writable = append(wantW.writable, strings.NewReplacer("CWD", tr.cwd, "HOME", tr.home).Replace(w))
				}
				slices.Sort(got.writable)
				slices.Sort(wantW.writable)
				if got.bgOnly != wantW.bgOnly || got.noNet != wantW.noNet || got.fail != wantW.fail || !slices.Equal(got.writable, wantW.writable) {
					t.Errorf("sandbox %+v\nwant %+v", got, wantW)
				}
				for _, c := range caches {
					if !slices.Contains(sb.Writable, c) {
						t.Errorf("tool cache %s is not writable: %v", c, sb.Writable)
					}
				}
			}
			var ignored []string
			for _, ig := range cfg.Provenance.Ignored {
				ignored = append(ignored, ig.What)
				if !strings.HasPrefix(ig.Source, filepath.Join(tr.cwd, ".cadre")) {
					t.Errorf("ignored %q from %s, not a workspace file", ig.What, ig.Source)
				}
			}
			if !slices.Equal(ignored, tc.ignored) {
				t.Errorf("ignored %q, want %q", ignored, tc.ignored)
			}
			var reported int
			for _, d := range diags {
				if d.Topic == TopicTrust && strings.Contains(d.Message, "sandbox.") {
					reported++
				}
			}
			if reported != len(tc.ignored) {
				t.Errorf("%d trust warnings about the sandbox for %d ignored items: %v", reported, len(tc.ignored), diags)
			}
		})
	}
}

// A sandbox object of the wrong shape is an error naming the file and the
// keys, not a silent default.
func TestSandboxSettingsMalformed(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"sandbox": true}`, `{"sandbox": {"enabled": "yes"}}`, `{"sandbox": {"network": {"enabled": 1}}}`, `{"sandbox": {"filesystem": {"allowWrite": "x"}}}`} {
		_, _, err, _ := loadIn(t, map[string]string{"HOME/.config/cadre/settings.json": body}, anthropicKey, Options{})
		if err == nil || !strings.Contains(err.Error(), "settings.json") {
			t.Errorf("%s: err = %v", body, err)
		}
	}
}
