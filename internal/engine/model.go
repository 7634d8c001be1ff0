package engine

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// SetModel changes the main agent's model for the runs that start after it
// (the Agent SDK's set_model, a terminal UI's /model); a run in progress
// keeps the model it started with. model is an alias Config.ResolveModel
// knows (sonnet, opus, haiku…) or a model id of Config.Model's provider;
// "" or "default" goes back to Config.ModelID. Sub-agents that inherit
// their parent's model inherit the new one. The system prompt, which names
// the model, is rendered again.
func (r *Runtime) SetModel(model string) error {
	model = strings.TrimSpace(model)
	id := r.cfg.ModelID
	if model != "" && model != "default" {
		if strings.ContainsFunc(model, func(c rune) bool { return unicode.IsSpace(c) || unicode.IsControl(c) }) {
			return fmt.Errorf("cadre: model %q: a model id has no spaces or control characters", model)
		}
		id = model
		if r.cfg.ResolveModel != nil {
			if resolved, ok := r.cfg.ResolveModel(model); ok {
				id = resolved
			}
		}
	}
	if id == "" {
		return errors.New("cadre: the model resolved to an empty id")
	}
	prefix, system := promptsOf(r).renderSystemFor(id)
	r.modelMu.Lock()
	r.modelID, r.systemPrefix, r.system = id, prefix, system
	r.modelMu.Unlock()
	return nil
}

// Model is the model id the main agent's next run uses.
func (r *Runtime) Model() string {
	id, _, _ := promptsOf(r).mainModel()
	return id
}

// mainModel is the main agent's model id and system prompt (its shared
// prefix and its own part), as a run starting now uses them.
func (sp systemPrompts) mainModel() (id, prefix, system string) {
	r := sp.r
	r.modelMu.Lock()
	defer r.modelMu.Unlock()
	return r.modelID, r.systemPrefix, r.system
}
