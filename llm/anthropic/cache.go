package anthropic

import "github.com/cadre-dev/cadre/llm"

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
	// System marks the (single) system prompt block.
	System bool
	// Blocks are the marked message blocks, earlier message first.
	Blocks []BlockRef
}

// Count returns how many markers b places.
func (b Breakpoints) Count() int {
	n := len(b.Blocks)
	if b.Tool >= 0 {
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
func PlaceBreakpoints(req *llm.Request) Breakpoints {
	bp := Breakpoints{Tool: -1}
	if req == nil || req.NoCache {
		return bp
	}
	if len(req.Tools) > 0 {
		bp.Tool = len(req.Tools) - 1
	}
	if req.System != "" {
		bp.System = true
	}
	first := max(len(req.Messages)-2, 0)
	for m := first; m < len(req.Messages); m++ {
		if bp.Count() == MaxBreakpoints {
			break
		}
		content := req.Messages[m].Content
		for i := len(content) - 1; i >= 0; i-- {
			if cacheable(content[i]) {
				bp.Blocks = append(bp.Blocks, BlockRef{Message: m, Block: i})
				break
			}
		}
	}
	return bp
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
