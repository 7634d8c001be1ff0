package permission_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/permission"
)

// The differential test: a generated corpus of command forms runs in real
// bash, in a scratch directory where `rm` and `pass` (a reader of a
// secret) are stubs first on PATH that leave a marker. Every form that
// really ran a stub must not be allowed under `Bash(rm:*)` and
// `Bash(pass:*)` deny rules, whatever the mode and the allow rules.

// payloads are the denied commands in quoting variants; each runs a stub.
var payloads = []string{
	`rm x`,
	`rm -f x`,
	`'rm' x`,
	`r\m x`,
	`"r"m x`,
	`$'\x72m' x`,
	`r""m -f x`,
	`pass show k`,
	`p\ass show k`,
}

// shellsUnderTest are shells present on every Linux CI machine; others
// join when installed.
func shellsUnderTest() []string {
	shells := []string{"bash", "sh", "bash --norc", "bash -e"}
	for _, extra := range []string{"dash", "zsh", "ksh", "mksh", "busybox"} {
		if _, err := exec.LookPath(extra); err == nil {
			if extra == "busybox" {
				shells = append(shells, "busybox sh")
			} else {
				shells = append(shells, extra)
			}
		}
	}
	return shells
}

// sq quotes text for the shell with single quotes.
func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// differentialCorpus builds the command forms: shells × ways of feeding
// them × payload quoting, wrappers around the payload and around shells,
// aliases and functions, git's indirections, and substitutions.
func differentialCorpus() []string {
	var forms []string
	add := func(f ...string) { forms = append(forms, f...) }
	feeds := []func(sh, p string) string{
		func(sh, p string) string { return sh + " -c " + sq(p) },
		func(sh, p string) string { return sh + " <<< " + sq(p) },
		func(sh, p string) string { return sh + " <<'EOF'\n" + p + "\nEOF" },
		func(sh, p string) string { return sh + " <<-EOF\n\t" + p + "\nEOF" },
		func(sh, p string) string { return "echo " + sq(p) + " | " + sh },
		func(sh, p string) string { return "printf '%s\\n' " + sq(p) + " | " + sh + " -s" },
		func(sh, p string) string { return sh + " < <(echo " + sq(p) + ")" },
		func(sh, p string) string { return "echo " + sq(p) + " | " + sh + " /dev/stdin" },
		func(sh, p string) string { return sh + " /dev/stdin <<< " + sq(p) },
		func(sh, p string) string { return "cat <<'EOF' | " + sh + "\n" + p + "\nEOF" },
		func(sh, p string) string {
			return "base64 -d <<< " + base64.StdEncoding.EncodeToString([]byte(p+"\n")) + " | " + sh
		},
		func(sh, p string) string { return "echo " + sq(p) + " > s.sh; " + sh + " s.sh" },
		func(sh, p string) string { return sh + " <(echo " + sq(p) + ")" },
	}
	for _, sh := range shellsUnderTest() {
		for _, feed := range feeds {
			for _, p := range payloads {
				add(feed(sh, p))
			}
		}
	}
	// The shell's own ways to run text: source, eval, functions, aliases.
	for _, p := range payloads {
		add(
			"source <(echo "+sq(p)+")",
			". <(echo "+sq(p)+")",
			"source /dev/stdin <<< "+sq(p),
			". /dev/stdin <<'EOF'\n"+p+"\nEOF",
			"echo "+sq(p)+" | source /dev/stdin",
			"eval "+sq(p),
			`eval "$(echo `+sq(p)+`)"`,
			"c="+sq(p)+`; eval "$c"`,
			"f() { "+p+"; }; f",
			"echo "+sq(p)+" > s.sh; . ./s.sh",
			"shopt -s expand_aliases\nalias z="+sq(p)+"\nz",
			"bash -O expand_aliases -c "+sq("alias z="+sq(p)+"\nz"),
			"bash -c "+sq("bash -c "+sq(p)),
			"sh -c "+sq("echo "+sq(p)+" | sh"),
			"bash -c "+sq(p)+" &\nwait",
			"( "+p+" )",
			"{ "+p+"; }",
			"true && "+p,
			"echo $( "+p+" )",
		)
	}
	// Wrappers that run their arguments, around the payload and around a
	// shell fed on its input.
	wrappers := []string{
		"timeout 5", "timeout -k 1 5", "nice", "nice -n 1", "nohup", "env", "env A=1", "env -u HOME",
		"stdbuf -oL", "flock L", "flock -w 2 L", "flock -x L", "setpriv", "unshare", "taskset 1",
		"taskset -c 0", "ionice -c3", "setsid -w", "command", "time", "chrt -o 0", "setarch x86_64",
		"prlimit --nofile=256", "strace -f -o /dev/null", "timeout 5 nice", "env nohup",
	}
	for _, w := range wrappers {
		for _, p := range payloads {
			add(w + " " + p)
		}
		add(
			w+" bash -c 'rm x'",
			w+" bash <<< 'rm x'",
			"echo 'rm x' | "+w+" bash",
			w+" sh -c 'pass show k'",
		)
	}
	for _, p := range payloads {
		add(
			"script -qc "+sq(p)+" /dev/null",
			"script -q -c "+sq(p)+" /dev/null",
			"script -qec "+sq(p)+" /dev/null",
			"script --quiet --command "+sq(p)+" /dev/null",
			"flock L -c "+sq(p),
			"flock -c "+sq(p)+" L",
			"echo x | xargs "+p,
			"echo "+sq(p)+" | xargs -I{} sh -c {}",
			"find . -maxdepth 0 -exec "+p+" \\;",
			"find . -maxdepth 0 -exec sh -c "+sq(p)+" \\;",
		)
	}
	// git's own indirections: -c aliases (with and without !), global
	// options before the subcommand, a pager.
	for _, p := range payloads {
		add(
			"git -c alias.z="+sq("!"+p)+" z",
			"git -c 'alias.z=!"+strings.ReplaceAll(p, "'", `'\''`)+"' z",
			"git -C . -c alias.z="+sq("!"+p)+" z",
			"git --no-pager -c alias.z="+sq("!"+p)+" z",
			"git -c alias.y="+sq("!"+p)+" -c alias.z=y z",
			"git -c alias.z="+sq("!sh -c "+sq(p))+" z",
			"git init -q && git config alias.q "+sq("!"+p)+" && git q",
			"git init -q && git -c user.name=a -c user.email=a@b -c core.editor="+sq(p)+" commit --allow-empty -q",
			"git init -q && GIT_EDITOR="+sq(p)+" git -c user.name=a -c user.email=a@b commit --allow-empty -q",
		)
	}
	// Input given other ways: descriptors, blocks, nested shells, files the
	// line writes, interpreters.
	for _, p := range payloads {
		add(
			"exec 3<<<"+sq(p)+"; bash <&3",
			"bash 3<<< "+sq(p)+" /dev/fd/3",
			"{ bash; } <<< "+sq(p),
			"bash -c bash <<< "+sq(p),
			"bash -c 'cat | sh' <<< "+sq(p),
			"cat > s.sh <<< "+sq(p)+"; sh s.sh",
			"tee s.sh <<< "+sq(p)+" >/dev/null; sh ./s.sh",
			"printf '%s\n' "+sq(p)+" > s; . ./s",
			"bash -- /dev/stdin <<< "+sq(p),
			"source /proc/self/fd/0 <<< "+sq(p),
			"command . /dev/stdin <<< "+sq(p),
			"builtin source <(echo "+sq(p)+")",
			"exec bash <<< "+sq(p),
			"time bash <<< "+sq(p),
			"! sh <<< "+sq(p),
			"yes "+sq(p)+" | head -1 | bash",
			"script -q /dev/null -c "+sq(p),
			"script -q /dev/null <<< "+sq(p),
			"perl -e "+sq("system(q("+strings.ReplaceAll(p, "'", "")+"))"),
			"awk "+sq("BEGIN{system(\"r\" \"m x\")}"),
			"echo x | sed "+sq("s/.*/"+strings.ReplaceAll(strings.ReplaceAll(p, "/", "\\/"), "'", "")+"/e"),
		)
	}
	// A script already in the project (pre.sh runs rm).
	add("bash pre.sh", "sh pre.sh", "./pre.sh", ". ./pre.sh", "source pre.sh", "bash < pre.sh", "timeout 5 ./pre.sh",
		"env ./pre.sh", "nohup ./pre.sh", "flock L ./pre.sh", "script -qc ./pre.sh /dev/null", "bash -c ./pre.sh",
		"cat pre.sh | sh", "sh -s < pre.sh", "find . -name pre.sh -exec sh {} \\;", "mkdir -p d && cd d && ../pre.sh")
	// Substitutions and variables in the command name.
	add(
		"$(echo rm) x", "`echo rm` x", `"$(printf rm)" x`, "X=rm; $X x", "${X:-rm} x", "c=(rm x); \"${c[@]}\"",
		"X=r; ${X}m x", "$(printf '\\x72m') x", "p=pass; $p show k", "a=(pass show k); ${a[@]}",
		"echo rm x | bash", "cmd=$(echo 'rm x'); $cmd", "IFS=,; c=rm,x; $c",
		"f() { \"$@\"; }; f rm x", "f() { $1 x; }; f rm", "cp \"$(command -v rm)\" d; ./d x",
		"ln -s \"$(command -v rm)\" d; ./d x", "hash -p \"$(command -v rm)\" zz; zz x",
		"printf -v c %s rm; $c x", "read c <<< rm; $c x", "mapfile -t a <<< rm; ${a[0]} x",
		"declare -n r=c; c=rm; $r x", "busybox rm x", "exec rm x",
	)
	return forms
}

// stub is a program that records it ran (and, for rm, what it was
// asked), leaving the marker beside the scratch directory's files.
func writeStub(t *testing.T, dir, name, marker string) {
	t.Helper()
	body := "#!/bin/sh\necho \"$0 $*\" >> " + sq(marker) + "\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// formRun is the outcome of one form in real bash.
type formRun struct {
	form string
	dir  string
	ran  bool
}

func TestBashDifferentialDenyRules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real bash for every form")
	}
	// .ci/run installs bash: without it the differential check would be
	// silently absent, so that is a failure, not a skip.
	bashPath, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("the differential test needs bash on PATH: %v", err)
	}
	forms := differentialCorpus()
	if len(forms) < 500 {
		t.Fatalf("corpus has %d forms, want at least 500", len(forms))
	}
	root := t.TempDir()
	runs := make([]formRun, len(forms))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, form := range forms {
		dir := filepath.Join(root, fmt.Sprintf("f%04d", i))
		bin := filepath.Join(dir, ".stubs")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		marker := filepath.Join(dir, ".ran")
		writeStub(t, bin, "rm", marker)
		writeStub(t, bin, "pass", marker)
		if err := os.WriteFile(filepath.Join(dir, "x"), []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pre.sh"), []byte("#!/bin/sh\nrm x\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		runs[i] = formRun{form: form, dir: dir}
		wg.Add(1)
		sem <- struct{}{}
		go func(r *formRun) {
			defer wg.Done()
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bashPath, "-c", r.form)
			cmd.Dir = r.dir
			cmd.Env = []string{
				"PATH=" + filepath.Join(r.dir, ".stubs") + ":/usr/local/bin:/usr/bin:/bin",
				"HOME=" + r.dir, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C",
				"GIT_CEILING_DIRECTORIES=" + root,
			}
			cmd.WaitDelay = time.Second
			_ = cmd.Run() // many forms fail; what matters is whether a stub ran
			_, statErr := os.Stat(filepath.Join(r.dir, ".ran"))
			_, xErr := os.Stat(filepath.Join(r.dir, "x"))
			r.ran = statErr == nil || os.IsNotExist(xErr)
		}(&runs[i])
	}
	wg.Wait()

	var deny []permission.Rule
	for _, s := range []string{"Bash(rm:*)", "Bash(pass:*)"} {
		r, err := permission.ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		r.Behavior, r.Source = permission.Deny, "test"
		deny = append(deny, r)
	}
	allowAll := permission.Rule{Behavior: permission.Allow, Tool: "Bash", Source: "test"}
	configs := []struct {
		name  string
		mode  permission.Mode
		rules []permission.Rule
	}{
		{"bypassPermissions", permission.ModeBypassPermissions, deny},
		{"default with Bash allowed", permission.ModeDefault, append([]permission.Rule{allowAll}, deny...)},
		{"acceptEdits with Bash allowed", permission.ModeAcceptEdits, append([]permission.Rule{allowAll}, deny...)},
	}
	ran := 0
	for _, r := range runs {
		if !r.ran {
			continue
		}
		ran++
		in, _ := json.Marshal(map[string]string{"command": r.form})
		for _, cfg := range configs {
			c, err := permission.NewChecker(permission.Config{Mode: cfg.mode, Cwd: r.dir, Home: r.dir, Rules: cfg.rules})
			if err != nil {
				t.Fatal(err)
			}
			if d := c.Check(permission.Request{Tool: "Bash", Input: in}); d.Behavior == permission.Allow {
				t.Errorf("%s: %q ran a denied program in bash but was allowed: %s", cfg.name, r.form, d.Reason)
			}
		}
	}
	t.Logf("%d forms, %d ran a stub", len(forms), ran)
	// The corpus must exercise the analysis: most forms really run a stub.
	if ran < len(forms)/2 {
		t.Fatalf("only %d of %d forms ran a stub: the harness is broken", ran, len(forms))
	}
}
