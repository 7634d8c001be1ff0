package prompts

import (
	"fmt"
	"strings"
)

// ToolInputInvalid is the result of a call whose input does not fit the
// tool's schema (a required field missing, a field of the wrong type): an
// input error the model can fix, not a permission denial — the call was
// never authorized or run.
func ToolInputInvalid(tool string, problems []string) string {
	return fmt.Sprintf("InputValidationError: invalid input for %s, so the call was not run: %s. Call %s again with the input fixed.",
		tool, strings.Join(problems, "; "), tool)
}
