package cli

import (
	"io"
	"os"
	"strings"
	"testing"
)

// TestWantsUI: only a terminal on both ends, no -p and no prompt open the
// UI; a pipe or /dev/null (a character device, not a terminal) does not.
func TestWantsUI(t *testing.T) {
	t.Parallel()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for _, tt := range []struct {
		name  string
		stdin io.Reader
		o     options
		args  []string
	}{
		{"a pipe", strings.NewReader("prompt"), options{}, nil},
		{"/dev/null", null, options{}, nil},
		{"-p", null, options{print: true}, nil},
		{"a prompt argument", null, options{}, []string{"hi"}},
	} {
		if wantsUI(procIO{stdin: tt.stdin, stdout: null}, &tt.o, tt.args) {
			t.Errorf("%s: opens the UI", tt.name)
		}
	}
}
