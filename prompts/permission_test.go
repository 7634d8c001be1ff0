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
	if Sentence("") != "" || Sentence("done.") != "Done." || Sentence("été") != "Été." {
		t.Errorf("Sentence: %q %q", Sentence(""), Sentence("done."))
	}
}
