package prompts

import (
	"errors"
	"strings"
	"testing"
)

func TestPermissionTextsGolden(t *testing.T) {
	got := strings.Join([]string{
		PermissionDenial{Tool: "Bash", Rule: "Bash(rm:*)", Source: "/p/.cadre/settings.json"}.Render(),
		PermissionDenial{Tool: "Bash", Rule: "Read(./secrets/**)", Times: 2}.Render(),
		PermissionDenial{Tool: "Write", Reason: PermNeedsApproval("file edits need approval in default mode") + PermNoPrompts, Suggest: "Write(./src/**)"}.Render(),
		PermissionDenial{Tool: "Bash", Reason: PermNeedsApproval(PermNoRule), Why: PermDeniedInBackground, Times: 3}.Render(),
		PermissionDenial{Tool: "Edit", Reason: PermAskRule("Edit(./go.mod)"), Why: PermUserDenied}.Render(),
		PermissionDenial{Tool: "Bash", Reason: PermPlanReadOnly, Why: PermPromptFailed(errors.New("stdin closed"))}.Render(),
		PermissionDenial{Tool: "Bash", Reason: PermAgentReadOnly}.Render(),
		PermissionDenial{Tool: "Bash", Reason: PermHookDenied + PermDontAskDenies}.Render(),
		PermCaseVariant("bash", "Bash"),
		PermDeniedByRule("Read(./secrets/**)", ""),
		PermDeniedByRule("Read(./secrets/**)", "`cat s*/*` may read it"),
		PermAllowedByRule("Bash(git:*)"),
		PermModeReadOnly("default"),
		PermAcceptEdits, PermBypassAllows, PermApprovedOnce, PermApprovedSession, PermHookAllowed, PermHookAsks,
	}, "\n")
	golden(t, "permission_texts", got)
	q := "`cat $F`"
	details := strings.Join([]string{
		PermInputNotObject, PermGlobClimbs, PermNoFilePath, PermNoCommand, PermReadsOutside, PermChangesFiles, PermWritesFiles,
		PermNotReadOnly, PermUnknownDirectory, PermNoRuleFor("WebFetch"), PermProtectedPath("/p/.git/config"), PermEditsNeedApproval("default"),
		PermOutsideDirs("/etc/hosts"), PermUncertain([]string{"`$(ls)` is a command substitution", "`eval` runs a string"}),
		PermUnparsable(errors.New("unterminated quote")), PermWritesOutside("/etc/x"), PermCommandLeaves("cd /"), PermCommandReadsOutside("cat /etc/hosts"),
		PermNoRuleForCommand("make"), PermDynamicWords("rm $X"),
		PermExposure(PermDynamicWord(q, "$F"), "Read(./secrets/**)", false),
		PermExposure(PermOpaqueProgram("`make`", "read"), "Read(./secrets/**)", true),
		PermGitUnknownRepo("git show HEAD:x"), PermReadsUnresolved("$F"), PermWritesUnresolved("$OUT"), PermInlineCode("`python -c x`", "inline Python"),
		PermIndirectPath("`cat /proc/self/root/x`", "/proc/self/root/x"), PermNamesPath("`cat secrets/key.txt`", "secrets/key.txt"),
		PermReadsTree("`grep -r TOP .`", "/p"), PermGitHistory("`git show HEAD:secrets/key.txt`", "/p", "Read(./secrets/**)"),
	}, "\n")
	golden(t, "permission_details", details)
	if Sentence("") != "" || Sentence("done.") != "Done." || Sentence("été") != "Été." {
		t.Errorf("Sentence: %q %q", Sentence(""), Sentence("done."))
	}
}
