package anthropic

import (
	"cmp"
	"slices"

	"github.com/cadre-dev/cadre/llm"
)

// MaxBreakpoints is the most cache_control markers one request may carry.
const MaxBreakpoints = 4

// BlockRef points at one content block: Request.Messages[Message].Content[Block].
type BlockRef struct {
	Message int
	Block   int
}

// Breakpoints says where the cache_control markers of one request go.
type Breakpoints struct {
	// Tool is the index in Request.Tools of the marked tool, -1 for none.
	Tool int
	// SystemPrefix marks the block of Request.SystemPrefix; System the
	// block of Request.System.
	SystemPrefix bool
	System       bool
	// Blocks are the marked message blocks, earlier message first.
	Blocks []BlockRef
}

// Count returns how many markers b places.
func (b Breakpoints) Count() int {
	n := len(b.Blocks)
	if b.Tool >= 0 {
		n++
	}
	if b.SystemPrefix {
		n++
	}
	if b.System {
		n++
	}
	return n
}

// marks reports whether message m, block i carries a marker.
func (b Breakpoints) marks(m, i int) bool {
	for _, r := range b.Blocks {
		if r.Message == m && r.Block == i {
			return true
		}
	}
	return false
}

// PlaceBreakpoints decides where the prompt-cache markers of req go, as a
// pure function of its shape: the last tool, the end of the system prompt,
// and the last cacheable block of each of the last two messages (tool
// definitions, system and history are cached in that order, so each marker
// closes a prefix that the next turn shares). Positions that do not exist
// are skipped; there are never more than MaxBreakpoints; req.NoCache places
// none. Thinking, redacted thinking and empty text blocks cannot carry a
// marker, so the marker goes on the last block before them that can.
//
// req.SharedTools (the leading tools the session's sub-agents are offered
// too, when the agent has more) moves the tool marker to the last shared
// tool, so a child's first request reads the tools its parent wrote.
//
// req.SystemPrefix (the part of the system prompt sibling sub-agents of
// any type share) gets a marker of its own, which closes the tools and that
// part as one prefix; the tool marker is then dropped, so the last two
// messages keep theirs. req.CacheHints (the end of the prefix sibling forks
// share) come first after the system prompt: with hints, the tool marker is
// dropped when a system marker closes the same prefix anyway, and the last
// messages take what budget is left, the last message first. Hints that
// point at no cacheable block are ignored.
func PlaceBreakpoints(req *llm.Request) Breakpoints {
	bp := Breakpoints{Tool: -1}
	if req == nil || req.NoCache {
		return bp
	}
	hints := validHints(req)
	systemMarked := req.System != "" || req.SystemPrefix != ""
	switch {
	case req.SharedTools > 0 && req.SharedTools < len(req.Tools):
		// The tools other agents share end a prefix of their own; the
		// system marker closes the rest of the tools.
		bp.Tool = req.SharedTools - 1
	case len(req.Tools) > 0 && req.SystemPrefix == "" && (len(hints) == 0 || !systemMarked):
		bp.Tool = len(req.Tools) - 1
	}
	bp.SystemPrefix = req.SystemPrefix != ""
	bp.System = req.System != ""
	for _, h := range hints {
		if bp.Count() == MaxBreakpoints {
			break
		}
		if !bp.marks(h.Message, h.Block) {
			bp.Blocks = append(bp.Blocks, BlockRef(h))
		}
	}
	first := max(len(req.Messages)-2, 0)
	for m := len(req.Messages) - 1; m >= first; m-- {
		if bp.Count() == MaxBreakpoints {
			break
		}
		content := req.Messages[m].Content
		for i := len(content) - 1; i >= 0; i-- {
			if cacheable(content[i]) {
				if !bp.marks(m, i) {
					bp.Blocks = append(bp.Blocks, BlockRef{Message: m, Block: i})
				}
				break
			}
		}
	}
	slices.SortFunc(bp.Blocks, func(a, b BlockRef) int {
		return cmp.Or(cmp.Compare(a.Message, b.Message), cmp.Compare(a.Block, b.Block))
	})
	return bp
}

// validHints returns the hints of req that point at a cacheable block,
// without repeats, in request order.
func validHints(req *llm.Request) []llm.CacheHint {
	var out []llm.CacheHint
	for _, h := range req.CacheHints {
		if h.Message < 0 || h.Message >= len(req.Messages) || h.Block < 0 || h.Block >= len(req.Messages[h.Message].Content) {
			continue
		}
		if !cacheable(req.Messages[h.Message].Content[h.Block]) || slices.Contains(out, h) {
			continue
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b llm.CacheHint) int {
		return cmp.Or(cmp.Compare(a.Message, b.Message), cmp.Compare(a.Block, b.Block))
	})
	return out
}

// cacheable reports whether a block can carry cache_control once sent.
func cacheable(b llm.Block) bool {
	switch b.Type {
	case llm.BlockText:
		return b.Text != ""
	case llm.BlockToolUse, llm.BlockToolResult:
		return true
	}
	return false
}
