package skills

import (
	"context"
	_ "embed"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

//go:embed skill.md
var toolDescription string

type toolInput struct {
	Skill string `json:"skill" jsonschema_description:"The name of the skill to load, as the skill listing shows it."`
	Args  string `json:"args,omitempty" jsonschema_description:"Optional arguments for the skill, as free text."`
}

// maxListedFiles caps the resource files named when a skill is loaded.
const maxListedFiles = 50

// NewTool returns the Skill tool over set: it loads a skill's instructions
// into the conversation and names the skill's other files. It only reads,
// so it needs no approval. Its description does not depend on set (the
// listing lives in the system prompt), so its spec bytes never change.
func NewTool(set *Set) tool.Tool {
	return tool.Func(tool.FuncConfig{Name: tool.Skill, Description: toolDescription, ReadOnly: true},
		func(ctx context.Context, env *tool.Env, in toolInput) (tool.Output, error) {
			return run(ctx, set, in), nil
		})
}

func run(ctx context.Context, set *Set, in toolInput) tool.Output {
	name := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(in.Skill), "/"))
	if name == "" {
		return tool.Errorf("skill is required: the name of a skill from the listing")
	}
	sk := set.Get(name)
	if sk == nil {
		names := make([]string, 0, len(set.Active()))
		for _, s := range set.Active() {
			names = append(names, s.Name)
		}
		if len(names) == 0 {
			return tool.Errorf("no skill %q: no skills are installed", name)
		}
		return tool.Errorf("no skill %q; the skills are: %s", name, strings.Join(names, ", "))
	}
	files, more := resourceFiles(ctx, sk.Dir)
	return tool.Output{Text: prompts.SkillLoaded(sk.Name, sk.Dir, sk.Body, files, more, in.Args)}
}

// resourceFiles lists the files of a skill directory other than SKILL.md,
// relative and sorted, at most maxListedFiles of them (and how many more).
func resourceFiles(ctx context.Context, dir string) ([]string, int) {
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return nil
		}
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "__pycache__") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == FileName || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(files)
	if len(files) > maxListedFiles {
		return files[:maxListedFiles], len(files) - maxListedFiles
	}
	return files, 0
}

// MaxPreloaded is how many names of a definition's `skills:` are
// preloaded; later names are ignored, as in Claude Code.
const MaxPreloaded = 32

// Preload renders the skills a definition names in `skills:` for its
// system prompt: the first MaxPreloaded names, in order, each once. It
// returns the text ("" when none resolve) and the names that match no
// skill, for a warning.
func (s *Set) Preload(names []string) (string, []string) {
	if len(names) > MaxPreloaded {
		names = names[:MaxPreloaded]
	}
	var out []prompts.PreloadedSkill
	var missing []string
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		sk := s.Get(n)
		if sk == nil {
			missing = append(missing, n)
			continue
		}
		out = append(out, prompts.PreloadedSkill{Name: sk.Name, Dir: sk.Dir, Body: sk.Body})
	}
	return prompts.PreloadedSkills(out), missing
}

// Listing renders the active skills for the system prompt (see
// prompts.SkillListing); "" when there are none.
func (s *Set) Listing() string {
	entries := make([]prompts.SkillEntry, 0, len(s.Active()))
	for _, sk := range s.Active() {
		entries = append(entries, prompts.SkillEntry{Name: sk.Name, Description: sk.Description})
	}
	return prompts.SkillListing(entries)
}
