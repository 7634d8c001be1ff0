package compact

import (
	"encoding/json"

	"github.com/cadre-dev/cadre/llm"
)

// RecentReads returns the paths of the files the conversation read with
// the tool named readTool (its "file_path" input), most recent first,
// each once, at most n; calls that failed are left out.
func RecentReads(msgs []llm.Message, readTool string, n int) []string {
	failed := map[string]bool{}
	var out []string
	seen := map[string]bool{}
	for i := len(msgs) - 1; i >= 0 && len(out) < n; i-- {
		for _, b := range msgs[i].Content {
			if b.Type == llm.BlockToolResult && b.IsError {
				failed[b.ToolUseID] = true
			}
		}
		blocks := msgs[i].Content
		for j := len(blocks) - 1; j >= 0 && len(out) < n; j-- {
			b := blocks[j]
			if b.Type != llm.BlockToolUse || b.Name != readTool || failed[b.ID] {
				continue
			}
			var in struct {
				FilePath string `json:"file_path"`
			}
			if json.Unmarshal(b.Input, &in) != nil || in.FilePath == "" || seen[in.FilePath] {
				continue
			}
			seen[in.FilePath] = true
			out = append(out, in.FilePath)
		}
	}
	return out
}

// InvokedSkills returns the skills the conversation loaded with the tool
// named skillTool (its "skill" input), in the order first invoked, each
// with the text its call returned; failed calls are left out.
func InvokedSkills(msgs []llm.Message, skillTool string) []Skill {
	names := map[string]string{} // tool use id → skill name
	var order []string
	bodies := map[string]string{}
	for _, m := range msgs {
		for _, b := range m.Content {
			switch {
			case b.Type == llm.BlockToolUse && b.Name == skillTool:
				var in struct {
					Skill string `json:"skill"`
				}
				if json.Unmarshal(b.Input, &in) == nil && in.Skill != "" {
					names[b.ID] = in.Skill
				}
			case b.Type == llm.BlockToolResult && !b.IsError:
				name, ok := names[b.ToolUseID]
				if !ok {
					continue
				}
				if _, had := bodies[name]; !had {
					order = append(order, name)
				}
				bodies[name] = b.ResultText()
			}
		}
	}
	out := make([]Skill, 0, len(order))
	for _, name := range order {
		out = append(out, Skill{Name: name, Body: bodies[name]})
	}
	return out
}
