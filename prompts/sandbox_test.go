package prompts

import (
	"strings"
	"testing"
)

func TestSandboxTextsGolden(t *testing.T) {
	got := strings.Join([]string{
		SandboxMaskedWrite("/p/secrets"),
		SandboxReadOnlyPath("/p/.git/hooks"),
		SandboxWriteRefused("/etc/x", "/p, /tmp"),
		SandboxWriteRefused("", "/p, /tmp"),
		SandboxMaskedRead("/p/secrets/key.txt"),
		SandboxPrivateTmp("/tmp/out.txt"),
		SandboxNetworkOff("the connection to example.com"),
	}, "\n")
	golden(t, "sandbox_notes", got)
}
