package prompts

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// SkillEntry is one skill as the model sees it in a listing.
type SkillEntry struct {
	Name        string
	Description string
}

// maxListedDescription caps a description in the listing.
const maxListedDescription = 1024

// SkillListing is the block of the system prompt that tells the model
// which skills exist and how to load one. Entries are sorted by name and
// descriptions flattened to one line, so the same skills always render to
// the same bytes. No skills, no block ("").
func SkillListing(entries []SkillEntry) string {
	if len(entries) == 0 {
		return ""
	}
	sorted := append([]SkillEntry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var b strings.Builder
	b.WriteString("Skills are packaged instructions (with scripts and reference files) for particular tasks. " +
		"When a task matches a skill's description, load the skill with the Skill tool before you start, then follow its instructions. " +
		"Load only skills you will use.\n\n<available_skills>\n")
	for _, e := range sorted {
		fmt.Fprintf(&b, "- %s: %s\n", e.Name, clipRunes(oneLine(e.Description), maxListedDescription))
	}
	b.WriteString("</available_skills>")
	return b.String()
}

// SkillLoaded is the Skill tool's result: the skill's instructions and
// where its other files are. files are paths relative to dir; more counts
// files left out of the list.
func SkillLoaded(name, dir, body string, files []string, more int, args string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Skill %q is loaded. Follow its instructions below for the current task.\n", name)
	fmt.Fprintf(&b, "Its directory is %s; paths in the instructions are relative to it.", dir)
	if len(files) > 0 {
		b.WriteString(" Other files of the skill (read or run them when the instructions call for them):\n")
		for _, f := range files {
			fmt.Fprintf(&b, "- %s\n", f)
		}
		if more > 0 {
			fmt.Fprintf(&b, "- … and %d more\n", more)
		}
	} else {
		b.WriteString("\n")
	}
	if strings.TrimSpace(args) != "" {
		fmt.Fprintf(&b, "\nArguments given with the skill: %s\n", args)
	}
	fmt.Fprintf(&b, "\n<skill name=%q>\n%s\n</skill>", name, strings.TrimSpace(body))
	return b.String()
}

// PreloadedSkill is a skill whose instructions go into an agent's system
// prompt at spawn (a definition's `skills:`).
type PreloadedSkill struct {
	Name string
	Dir  string
	Body string
}

// PreloadedSkills renders the skills a definition preloads, in the order
// given; "" when there are none.
func PreloadedSkills(skills []PreloadedSkill) string {
	if len(skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("These skills are loaded for you; follow their instructions where they apply. Paths in a skill are relative to its directory.\n")
	for _, s := range skills {
		fmt.Fprintf(&b, "\n<skill name=%q dir=%q>\n%s\n</skill>\n", s.Name, s.Dir, strings.TrimSpace(s.Body))
	}
	return strings.TrimRight(b.String(), "\n")
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
