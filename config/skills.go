package config

import (
	"context"
	"fmt"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/skills"
)

// TopicSkills: a SKILL.md file (skills diagnostics).
const TopicSkills Topic = "skills"

// configureSkills loads the skills of a session in cwd (S-2, S-4.1):
// ~/.claude/skills and ~/.config/cadre/skills, then .claude/skills and
// .cadre/skills from the git root down to cwd, later winning; plugins'
// skills (plugin:name) come first. Problems
// with a skill file are diagnostics; that skill is left out.
func configureSkills(ctx context.Context, cfg *cadre.Config, cwd, home string, plugins []skills.PluginSkills) ([]Diagnostic, error) {
	set, err := skills.Load(ctx, skills.LoadOptions{Cwd: cwd, Home: home, Plugins: plugins})
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	var diags []Diagnostic
	for _, d := range set.Diagnostics() {
		diags = append(diags, Diagnostic{File: d.Path, Line: d.Line, Severity: Severity(d.Severity), Topic: TopicSkills, Message: d.Message})
	}
	cfg.Skills = set
	return diags, nil
}
