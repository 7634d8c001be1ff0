package permission

import "testing"

// TestReadOnlyForms: read-only forms of git and the coreutils run in plan
// mode and for read-only agents (inside the working directories); their
// write forms do not.
func TestReadOnlyForms(t *testing.T) {
	f := newFixture(t)
	readOnly := []string{
		"git status", "git status --short", "git branch --show-current", "git branch", "git branch -a",
		"git branch -vv", "git branch --list 'feat/*'", "git branch --contains HEAD", "git rev-parse HEAD",
		"git rev-parse --show-toplevel", "git rev-parse --abbrev-ref HEAD", "git log --oneline -n 5",
		"git log --format=%H -1", "git diff --stat", "git diff HEAD~1 --name-only", "git show HEAD --stat",
		"git config --get user.name", "git config user.email", "git config --list", "git config get core.editor",
		"git remote -v", "git remote", "git remote show origin", "git remote get-url origin", "git tag",
		"git tag -l 'v*'", "git describe --tags", "git ls-files", "git blame a.txt", "git rev-list --count HEAD",
		"git merge-base HEAD main", "git ls-tree HEAD", "git for-each-ref --format='%(refname)'", "git stash list",
		"git worktree list", "git reflog -n 3", "git symbolic-ref HEAD", "git shortlog -sn", "git -C src status",
		"git --no-pager log -1", "ls", "ls -la src", "wc -l a.txt", "head -n 3 a.txt", "tail -5 a.txt", "cat a.txt",
		"grep -n x a.txt", "find . -name '*.go'", "sort a.txt", "uniq a.txt", "cut -d: -f1 a.txt", "du -sh .",
		"stat a.txt", "file a.txt", "diff a.txt a.txt", "md5sum a.txt", "tree src", "pwd", "basename /a/b",
		"echo hi", "date +%s", "nl a.txt", "tr a b < a.txt", "expr 4 / 2", "uname -a",
		"jq . a.txt", "paste a.txt a.txt", "ls | wc -l", "git log --oneline | head -3",
	}
	writes := []string{
		"git branch -D x", "git branch -d x", "git branch -m a b", "git branch newbranch", "git branch -u origin/main",
		"git tag v1", "git tag -d v1", "git tag -a v1 -m x", "git config user.name x", "git config --unset user.name",
		"git config --add a.b c", "git config --edit", "git config set user.name x", "git remote add o u",
		"git remote remove o", "git remote set-url o u", "git stash", "git stash pop", "git worktree add ../w",
		"git reflog expire --all", "git symbolic-ref HEAD refs/heads/x", "git diff --output=o.txt",
		"git commit -m x", "git checkout -b x", "git -c core.pager=cat log", "sort -o out a.txt",
		"sort --output=out a.txt", "find . -delete", "find . -exec rm {} ;", "find . -fprint out",
		"shuf -o out a.txt", "tree -o out", "date -s 2020-01-01", "uniq a.txt out.txt", "ls > out.txt",
		"rm a.txt", "touch b", "mkdir d", "cp a.txt b.txt", "tee out.txt", "sed -i s/a/b/ a.txt",
	}
	var cases []checkCase
	for _, cmd := range readOnly {
		cases = append(cases,
			checkCase{name: "read-only form in plan", mode: ModePlan, input: bashIn(cmd), want: Allow},
			checkCase{name: "read-only form for a read-only agent", mode: ModeDefault, agentReadOnly: true, input: bashIn(cmd), want: Allow},
			checkCase{name: "read-only form in dontAsk", mode: ModeDontAsk, input: bashIn(cmd), want: Allow},
		)
	}
	for _, cmd := range writes {
		cases = append(cases,
			checkCase{name: "write form in plan", mode: ModePlan, input: bashIn(cmd), want: Deny},
			checkCase{name: "write form for a read-only agent", mode: ModeAcceptEdits, agentReadOnly: true, input: bashIn(cmd), want: Deny},
		)
	}
	if len(readOnly) < 30 {
		t.Fatalf("table has %d read-only forms, want at least 30", len(readOnly))
	}
	runCases(t, f, cases)
	for _, cmd := range readOnly {
		if !BashReadOnly(cmd) {
			t.Errorf("BashReadOnly(%q) = false, want true", cmd)
		}
	}
	for _, cmd := range writes {
		if BashReadOnly(cmd) {
			t.Errorf("BashReadOnly(%q) = true, want false", cmd)
		}
	}
}
