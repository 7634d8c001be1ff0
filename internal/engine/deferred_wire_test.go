package engine

import (
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/tool"
)

// listedDeferred returns the deferred tools a system prompt names, in
// order (prompts.DeferredTools' two lines).
func listedDeferred(system string) []string {
	var out []string
	for _, lead := range []string{"Deferred tools (load with ToolSearch before use): ", "Also deferred: "} {
		_, rest, ok := strings.Cut(system, lead)
		if !ok {
			continue
		}
		line, _, _ := strings.Cut(rest, ".")
		out = append(out, strings.Split(line, ", ")...)
	}
	return out
}

// wireTools are the tools a request reaches: those it offers, then the
// deferred ones its system prompt names.
func wireTools(r *llmtest.Request) []string {
	return append(r.ToolNames(), listedDeferred(r.System)...)
}

// ceilingOnWire is how a ceiling's tools appear in wireTools: with
// ToolSearch among them, the deferred ones go last, in their list order.
func ceilingOnWire(ceiling []string) []string {
	if !slices.Contains(ceiling, tool.ToolSearch) {
		return ceiling
	}
	var offered, deferred []string
	for _, n := range ceiling {
		if !isDeferred(n) {
			offered = append(offered, n)
		}
	}
	for _, n := range deferredTools {
		if slices.Contains(ceiling, n) {
			deferred = append(deferred, n)
		}
	}
	return append(offered, deferred...)
}
