package engine

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/workspace"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/skills"
	"github.com/cadre-dev/cadre/tool"
)

// The system prompts: the main agent's, and a sub-agent's in two parts
// (the part siblings share, rendered once per distinct input, and its
// own). systemPrompts renders the session's parts; toolSetup renders one
// agent's.

// renderSystemFor renders the main agent's system prompt for a model id,
// in two parts (llm.Request.SystemPrefix). With the default prompt, prefix
// is the part every agent of the session shares (sharedSystem: the common
// text, environment, instructions, skills, deferred tools), the very bytes
// a general-purpose child's prompt starts with, so the child's first
// request reads them from the cache its parent wrote (issue 24); system is
// the main agent's own. A custom prompt (Config.SystemPrompt) shares
// nothing: prefix is "".
func (sp systemPrompts) renderSystemFor(modelID string) (prefix, system string) {
	r := sp.r
	shared, own := deferredSplit(r.mainPool, r.cfg.Coordinator) // deferred.go
	var parts []string
	if r.cfg.SystemPrompt == "" {
		key := sharedSystemKey{cwd: r.cfg.Cwd, modelID: modelID, date: day(r.cfg.Now()), instructions: true,
			skills: sp.skillListing(r.base), deferred: prompts.DeferredTools(shared, false)}
		prefix = sp.sharedSystem(key)
		parts = append(parts, prompts.Main())
		if block := prompts.DeferredTools(own, len(shared) > 0); block != "" {
			parts = append(parts, block)
		}
	} else {
		parts = append(parts, r.cfg.SystemPrompt, sp.environment(r.cfg.Cwd, modelID).Render())
		if block := sp.skillListing(r.base); block != "" { // tools.go
			parts = append(parts, block)
		}
		if block := prompts.DeferredTools(append(shared, own...), false); block != "" {
			parts = append(parts, block)
		}
	}
	if block := sp.coordinatorBlock(); block != "" { // coordinator.go
		parts = append(parts, block)
	}
	if r.cfg.AppendSystemPrompt != "" {
		parts = append(parts, r.cfg.AppendSystemPrompt)
	}
	return prefix, strings.Join(parts, "\n\n")
}

// day is t at midnight: the date the prompts show.
func day(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
}

func (sp systemPrompts) environment(cwd, modelID string) prompts.Environment {
	r := sp.r
	f := r.facts.Get(cwd)
	return prompts.Environment{Cwd: cwd, Dirs: r.cfg.AddDirs, ModelID: modelID, Date: r.cfg.Now(), GitRepo: f.InRepo, GitBranch: f.Repo.Branch}
}

// instructionsBlock is the project instructions file of dir, framed.
func (sp systemPrompts) instructionsBlock(dir string) string {
	r := sp.r
	in := r.facts.Get(dir).Instructions
	return prompts.Instructions(in.Name, in.Text, in.Cut)
}

// memoryLines is how much of MEMORY.md goes into the prompt (S-4.7).
const memoryLines = 200

// renderSystem renders a sub-agent's system prompt (S-5.2) in two parts
// (llm.Request.SystemPrefix). shared is what every agent with the same
// model, working directory and tools sees alike, the main agent included
// (sharedSystem): the common text with the fixed sub-agent block, the
// environment, the project instructions unless the definition omits
// them, the skill listing and the deferred tools (the same for the same
// tools). own is its own: the git status snapshot unless omitted (taken
// while the main agent's first request is in flight, so the main agent's
// prompt cannot hold it), the definition's body, its memory (S-4.7) and
// the skills it preloads. shared goes first, so a child's first request
// reads it from the cache its parent wrote, and a fan-out of mixed types
// with one tool list shares the tools and shared as one cached prefix
// (issue 12). What it could not include is a receipt warning.
func (su toolSetup) renderSystem(cwd string) (shared, own string) {
	c := su.a
	rt, def := c.run.rt, c.def
	key := sharedSystemKey{cwd: cwd, modelID: c.modelID, date: day(rt.cfg.Now()), instructions: !def.OmitInstructions}
	if su.defers() {
		key.deferred = promptsOf(rt).deferredBlock(c.pool) // deferred.go
	}
	// Skills (tools.go): the listing when the child has the Skill tool.
	key.skills = promptsOf(rt).skillListing(c.pool)
	shared = promptsOf(rt).sharedSystem(key)
	var mine []string
	if !def.OmitGitStatus {
		if block, ready := promptsOf(rt).gitBlock(cwd); !ready {
			c.warn("git status was not ready yet; the agent started without it")
		} else if block != "" {
			mine = append(mine, block)
		}
	}
	if body := strings.TrimSpace(def.Body); body != "" {
		mine = append(mine, body)
	}
	if block := su.memory(); block != "" {
		mine = append(mine, block)
	}
	// The skills its definition preloads.
	if block := su.preloadSkills(); block != "" {
		mine = append(mine, block)
	}
	return shared, strings.Join(mine, "\n\n")
}

// sharedSystemKey is everything the shared part of a system prompt is
// made of: its working directory (environment and instructions are per
// directory, each a snapshot of the session's start), model, date (the
// day), whether it keeps the instructions, the skill listing and the
// deferred tools block it gets.
type sharedSystemKey struct {
	cwd, modelID string
	date         time.Time
	instructions bool
	skills       string
	deferred     string
}

// sharedSystem returns the shared part of a system prompt for key,
// rendered on first use: agents alike in key get the same string (one
// copy, not one each).
func (sp systemPrompts) sharedSystem(key sharedSystemKey) string {
	r := sp.r
	r.sysMu.Lock()
	defer r.sysMu.Unlock()
	if s, ok := r.sysShared[key]; ok {
		return s
	}
	env := sp.environment(key.cwd, key.modelID)
	env.Date = key.date
	parts := []string{prompts.Common(), env.Render()}
	if key.instructions {
		if block := sp.instructionsBlock(key.cwd); block != "" {
			parts = append(parts, block)
		}
	}
	if key.skills != "" {
		parts = append(parts, key.skills)
	}
	if key.deferred != "" {
		parts = append(parts, key.deferred)
	}
	s := strings.Join(parts, "\n\n")
	if r.sysShared == nil {
		r.sysShared = map[sharedSystemKey]string{}
	}
	r.sysShared[key] = s
	return s
}

// gitBlock is the git status block of cwd's snapshot, rendered once per
// directory, and whether the snapshot was ready.
func (sp systemPrompts) gitBlock(cwd string) (string, bool) {
	r := sp.r
	gs, ready := r.git.Get(cwd)
	if !ready {
		return "", false
	}
	r.sysMu.Lock()
	defer r.sysMu.Unlock()
	if s, ok := r.gitBlocks[cwd]; ok {
		return s, true
	}
	s := prompts.GitStatus(gs.Status, gs.MoreLines, gs.Log)
	if r.gitBlocks == nil {
		r.gitBlocks = map[string]string{}
	}
	r.gitBlocks[cwd] = s
	return s, true
}

// memory makes the agent's memory directory one of its working
// directories (so its permission mode covers its notes) and returns the
// prompt block about it; "" without memory.
func (su toolSetup) memory() string {
	c := su.a
	rt, def := c.run.rt, c.def
	if def.Memory == "" {
		return ""
	}
	dir, err := workspace.CheckedMemoryDir(string(def.Memory), def.Name, rt.cfg.Home, rt.cfg.Cwd)
	if err != nil { // New refuses such definitions; kept for any path around it
		c.warn(err.Error() + "; the agent runs without memory")
		return ""
	}
	if dir == "" {
		c.warn(fmt.Sprintf("memory: %s needs the user's home directory (Config.Home); the agent runs without memory", def.Memory))
		return ""
	}
	c.env.Dirs = append(c.env.Dirs, dir)
	m, err := workspace.ReadMemory(dir, memoryLines)
	if err != nil {
		c.warn(err.Error())
	}
	return prompts.Memory{Dir: dir, File: filepath.Join(dir, workspace.MemoryFile), MaxLines: memoryLines,
		Exists: m.Exists, Lines: m.Lines, Cut: m.Cut}.Render()
}

// skillListing is the block of a system prompt that lists the session's
// skills; "" when there are none or the agent has no Skill tool.
func (sp systemPrompts) skillListing(pool *tool.Pool) string {
	r := sp.r
	if _, ok := pool.Get(tool.Skill); !ok {
		return ""
	}
	return r.cfg.Skills.Listing()
}

// preloadSkills renders the skills a definition's `skills:` preloads
// (S-4.1: the first skills.MaxPreloaded names) for the child's system
// prompt; names that match no skill are receipt warnings.
func (su toolSetup) preloadSkills() string {
	c := su.a
	if len(c.def.Skills) == 0 {
		return ""
	}
	if n := len(c.def.Skills); n > skills.MaxPreloaded {
		c.warn(fmt.Sprintf("skills: %d names given; only the first %d are preloaded", n, skills.MaxPreloaded))
	}
	text, missing := c.run.rt.cfg.Skills.Preload(c.def.Skills)
	for _, name := range missing {
		c.warn(fmt.Sprintf("skills: no skill named %q is installed; it was not preloaded", name))
	}
	return text
}

// coordinatorBlock is the system prompt's part about coordinator mode
// ("" outside it).
func (sp systemPrompts) coordinatorBlock() string {
	r := sp.r
	if !r.cfg.Coordinator {
		return ""
	}
	return prompts.Coordinator()
}
