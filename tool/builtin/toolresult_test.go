package builtin

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStructuredPatch(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		want           []patchHunk
	}{
		{"same", "a\nb\n", "a\nb\n", []patchHunk{}},
		{"first line", "hello world\nsecond line\n", "hello there\nsecond line\n",
			[]patchHunk{{OldStart: 1, OldLines: 2, NewStart: 1, NewLines: 2, Lines: []string{"-hello world", "+hello there", " second line"}}}},
		{"whole file", "hello there\nsecond line\n", "hello again\nrewritten\n",
			[]patchHunk{{OldStart: 1, OldLines: 2, NewStart: 1, NewLines: 2, Lines: []string{"-hello there", "-second line", "+hello again", "+rewritten"}}}},
		{"context three", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nX\n6\n7\n8\n9\n",
			[]patchHunk{{OldStart: 2, OldLines: 7, NewStart: 2, NewLines: 7, Lines: []string{" 2", " 3", " 4", "-5", "+X", " 6", " 7", " 8"}}}},
		{"insert into empty", "", "a\n",
			[]patchHunk{{OldStart: 0, OldLines: 0, NewStart: 1, NewLines: 1, Lines: []string{"+a"}}}},
		{"delete all", "a\n", "",
			[]patchHunk{{OldStart: 1, OldLines: 1, NewStart: 0, NewLines: 0, Lines: []string{"-a"}}}},
	} {
		if d := cmp.Diff(tc.want, structuredPatch(tc.old, tc.new)); d != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.name, d)
		}
	}
}
