// Package skillscmd is the `cadre skills` command: list the skills cadre
// finds, with their source, what shadows what, and the problems found in
// SKILL.md files.
package skillscmd

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/internal/plugin"
	"github.com/cadre-dev/cadre/skills"
)

type options struct {
	cwd        string
	home       string
	json       bool
	pluginDirs []string
}

// New returns the `skills` command.
func New() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "skills",
		Short: "List skills (SKILL.md) with their source, shadowing and problems",
		Long: `List the skills cadre finds: Claude Code plugins' (plugin:skill), user (~/.claude/skills, ~/.config/cadre/skills)
and project (.claude/skills and .cadre/skills in every directory from the git
root down to the working directory; deeper wins). Each skill is a directory
holding a SKILL.md with name and description in its frontmatter. A later
source replaces an earlier skill of the same name; the table shows which.
Problems in SKILL.md files are printed as path:line: severity: message.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			home := o.home
			if home == "" {
				home, _ = os.UserHomeDir()
			}
			// Claude Code plugins: the installed ones enabledPlugins turns
			// on, and --plugin-dir.
			var dirs []plugin.Dir
			for _, d := range o.pluginDirs {
				dirs = append(dirs, plugin.Dir{Path: d})
			}
			plugins, pdiags := config.SessionPlugins(cmp.Or(o.cwd, "."), home, dirs, os.Getenv)
			for _, d := range pdiags {
				fmt.Fprintln(cmd.ErrOrStderr(), "cadre: "+d.String())
			}
			set, err := skills.Load(ctx, skills.LoadOptions{Cwd: o.cwd, Home: home, Plugins: config.PluginSkills(plugins)})
			if err != nil {
				return err
			}
			if o.json {
				return writeJSON(cmd.OutOrStdout(), set)
			}
			writeTable(cmd.OutOrStdout(), set)
			for _, d := range set.Diagnostics() {
				fmt.Fprintln(cmd.ErrOrStderr(), d.String())
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.cwd, "cwd", "", "working directory to look for project skills from (default: the current directory)")
	f.StringVar(&o.home, "home", "", "home directory for user skills (default: $HOME)")
	f.StringArrayVar(&o.pluginDirs, "plugin-dir", nil, "also load the Claude Code plugin in this directory (repeatable); its skills are named plugin:skill")
	_ = f.MarkHidden("home")
	f.BoolVar(&o.json, "json", false, `print {"skills": [...], "diagnostics": [...]} as JSON`)
	return cmd
}

// ordered lists every skill grouped by name: the active one, then those
// it shadows, latest first.
func ordered(set *skills.Set) []*skills.Skill {
	var out []*skills.Skill
	all := set.All()
	for _, a := range set.Active() {
		out = append(out, a)
		for i := len(all) - 1; i >= 0; i-- {
			if s := all[i]; s.Name == a.Name && s != a {
				out = append(out, s)
			}
		}
	}
	return out
}

func writeTable(w io.Writer, set *skills.Set) {
	if len(set.All()) == 0 {
		fmt.Fprintln(w, "No skills found.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tDESCRIPTION\tPATH\tSHADOWED BY")
	for _, s := range ordered(set) {
		shadow := "-"
		if s.ShadowedBy != "" {
			shadow = s.ShadowedBy
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Source, clip(s.Description, 60), s.Path, shadow)
	}
	tw.Flush()
}

type jsonSkill struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	AllowedTools []string `json:"allowedTools,omitempty"`
	Source       string   `json:"source"`
	Path         string   `json:"path"`
	Dir          string   `json:"dir"`
	Active       bool     `json:"active"`
	ShadowedBy   *string  `json:"shadowedBy"`
}

func writeJSON(w io.Writer, set *skills.Set) error {
	out := struct {
		Skills      []jsonSkill         `json:"skills"`
		Diagnostics []skills.Diagnostic `json:"diagnostics"`
	}{Skills: []jsonSkill{}, Diagnostics: set.Diagnostics()}
	if out.Diagnostics == nil {
		out.Diagnostics = []skills.Diagnostic{}
	}
	for _, s := range ordered(set) {
		j := jsonSkill{Name: s.Name, Description: s.Description, AllowedTools: s.AllowedTools, Source: string(s.Source), Path: s.Path, Dir: s.Dir, Active: s.ShadowedBy == ""}
		if s.ShadowedBy != "" {
			sb := s.ShadowedBy
			j.ShadowedBy = &sb
		}
		out.Skills = append(out.Skills, j)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write skills JSON: %w", err)
	}
	return nil
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
