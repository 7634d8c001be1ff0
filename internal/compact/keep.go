package compact

import (
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
)

// Caps on what is read again after a compaction, as in Claude Code: up
// to five recent files, each cut at about 5,000 tokens.
const (
	MaxFiles     = 5
	MaxFileBytes = 20_000
)

// Keep is what must survive a compaction besides the summary. The engine
// gathers it from the agent (its file state, todo list, task registry,
// skills); what lives on the agent rather than in its messages — the
// fork marker, depth, capability ceiling, budget — needs no keeping.
type Keep struct {
	// Files are the last files the agent read, most recent first, read
	// again now (Rebuild keeps MaxFiles of them, each cut at
	// MaxFileBytes).
	Files []File
	// Plan is an active plan; "" for none.
	Plan string
	// Skills are the skills invoked, with their instructions.
	Skills []Skill
	// Todos is the agent's todo list.
	Todos []prompts.CompactTodo
	// Tasks are the agent's live background tasks.
	Tasks []prompts.CompactTask
	// Extra are further texts that must survive, each its own block.
	// This is the seam for a teammate (issue 25): its team, role, current
	// task and unread mail go here once teammates exist.
	Extra []string
}

// File is a file read again for the new conversation.
type File struct {
	Path, Content string
}

// Skill is an invoked skill and its instructions.
type Skill struct {
	Name, Body string
}

// Rebuild returns the conversation that replaces the compacted one: one
// user message holding the summary (with the transcript path that keeps
// the full history, "" for none), what keep holds, and the instruction to
// carry on.
func Rebuild(summary, transcript string, keep Keep) []llm.Message {
	blocks := []llm.Block{llm.TextBlock(prompts.CompactSummary(summary, transcript))}
	for i, f := range keep.Files {
		if i == MaxFiles {
			break
		}
		content, cut := f.Content, false
		if len(content) > MaxFileBytes {
			content, cut = cutUTF8(content, MaxFileBytes), true
		}
		blocks = append(blocks, llm.TextBlock(prompts.CompactFile(f.Path, content, cut)))
	}
	if keep.Plan != "" {
		blocks = append(blocks, llm.TextBlock(prompts.CompactPlan(keep.Plan)))
	}
	for _, s := range keep.Skills {
		blocks = append(blocks, llm.TextBlock(prompts.CompactSkill(s.Name, s.Body)))
	}
	if len(keep.Todos) > 0 {
		blocks = append(blocks, llm.TextBlock(prompts.CompactTodos(keep.Todos)))
	}
	if len(keep.Tasks) > 0 {
		blocks = append(blocks, llm.TextBlock(prompts.CompactTasks(keep.Tasks)))
	}
	for _, e := range keep.Extra {
		if e != "" {
			blocks = append(blocks, llm.TextBlock(e))
		}
	}
	blocks = append(blocks, llm.TextBlock(prompts.CompactContinue()))
	return []llm.Message{{Role: llm.RoleUser, Content: blocks}}
}

// cutUTF8 cuts s to at most n bytes without splitting a character.
func cutUTF8(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
