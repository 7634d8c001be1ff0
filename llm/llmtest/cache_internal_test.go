package llmtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// blocks builds n blocks of 40 bytes (10 tokens) each, tagged by seed,
// with breakpoints at the given indexes.
func blocks(seed string, n int, bps ...int) []cacheBlock {
	out := make([]cacheBlock, n)
	for i := range out {
		d := fmt.Sprintf("%s-%d", seed, i)
		out[i].data = []byte(d + strings.Repeat(".", 40-len(d)))
	}
	for _, bp := range bps {
		out[bp].breakpoint = true
	}
	return out
}

func TestAnthropicCacheAccounting(t *testing.T) {
	type usage struct{ In, Read, Write int64 }
	type step struct {
		model  string
		blocks []cacheBlock
		want   usage
	}
	grown := append(blocks("a", 5), blocks("b", 3, 2)...)
	grown[4].breakpoint = false
	farGrown := append(blocks("a", 5), blocks("c", 25, 24)...)
	changed := blocks("a", 5, 4)
	changed[0].data = []byte(strings.Repeat("x", 40))
	cases := []struct {
		name     string
		minCache int64
		steps    []step
	}{
		{"no breakpoint caches nothing", 0, []step{
			{"m", blocks("a", 5), usage{50, 0, 0}},
			{"m", blocks("a", 5), usage{50, 0, 0}},
		}},
		{"same prefix twice reads it", 0, []step{
			{"m", blocks("a", 5, 2), usage{20, 0, 30}},
			{"m", blocks("a", 5, 2), usage{20, 30, 0}},
		}},
		{"growing conversation reads the old breakpoint through the lookback", 0, []step{
			{"m", blocks("a", 5, 4), usage{0, 0, 50}},
			{"m", grown, usage{0, 50, 30}},
		}},
		{"beyond the 20-block lookback is a miss", 0, []step{
			{"m", blocks("a", 5, 4), usage{0, 0, 50}},
			{"m", farGrown, usage{0, 0, 300}},
		}},
		{"a changed earlier block misses", 0, []step{
			{"m", blocks("a", 5, 4), usage{0, 0, 50}},
			{"m", changed, usage{0, 0, 50}},
		}},
		{"another model misses", 0, []step{
			{"m", blocks("a", 5, 4), usage{0, 0, 50}},
			{"n", blocks("a", 5, 4), usage{0, 0, 50}},
		}},
		{"several breakpoints: longest read, write to the last", 0, []step{
			{"m", blocks("a", 6, 1), usage{40, 0, 20}},
			{"m", blocks("a", 6, 1, 3, 5), usage{0, 20, 40}},
			{"m", blocks("a", 6, 1, 3), usage{20, 40, 0}},
		}},
		{"below the minimum nothing is written", 35, []step{
			{"m", blocks("a", 5, 2), usage{50, 0, 0}},
			{"m", blocks("a", 5, 2, 4), usage{0, 0, 50}},
			{"m", blocks("a", 5, 2, 4), usage{0, 50, 0}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := prefixCache{}
			for i, st := range tc.steps {
				in, read, write := c.anthropic(st.model, st.blocks, tc.minCache)
				if diff := cmp.Diff(st.want, usage{in, read, write}); diff != "" {
					t.Errorf("step %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestOpenAICacheAccounting(t *testing.T) {
	c := prefixCache{}
	if p, cached := c.openai("m", blocks("a", 3), 0); p != 30 || cached != 0 {
		t.Errorf("first: %d %d", p, cached)
	}
	grown := append(blocks("a", 3), blocks("b", 2)...)
	if p, cached := c.openai("m", grown, 0); p != 50 || cached != 30 {
		t.Errorf("grown: %d %d", p, cached)
	}
	if p, cached := c.openai("m", blocks("z", 3), 0); p != 30 || cached != 0 {
		t.Errorf("other: %d %d", p, cached)
	}
	c = prefixCache{}
	c.openai("m", blocks("a", 3), 25)
	if _, cached := c.openai("m", blocks("a", 3), 25); cached != 30 {
		t.Errorf("min: cached %d", cached)
	}
}

func TestChunks(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want []string
	}{
		{"", 4, []string{""}},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"héllo", 2, []string{"h", "é", "ll", "o"}},
		{"日本", 1, []string{"日", "本"}},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, chunks(tc.in, tc.n)); diff != "" {
			t.Errorf("chunks(%q, %d) (-want +got):\n%s", tc.in, tc.n, diff)
		}
	}
}
