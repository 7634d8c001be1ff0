package config

import (
	"testing"
	"time"

	"github.com/cadre-dev/cadre/agentdef"
)

// TestLeastBudget: files' budgets merge limit by limit to the tighter, so
// no file lifts another's limit.
func TestLeastBudget(t *testing.T) {
	t.Parallel()
	user := agentdef.Budget{USD: 2, Turns: 50}
	project := agentdef.Budget{USD: 5, Tokens: 1000, WallTime: time.Minute}
	want := agentdef.Budget{USD: 2, Tokens: 1000, Turns: 50, WallTime: time.Minute}
	if got := leastBudget(user, project); got != want {
		t.Fatalf("least %+v, want %+v", got, want)
	}
	if got := leastBudget(project, user); got != want {
		t.Fatalf("order matters: %+v", got)
	}
	if got := leastBudget(agentdef.Budget{}, agentdef.Budget{}); !got.IsZero() {
		t.Fatalf("two empty budgets make %+v", got)
	}
}
