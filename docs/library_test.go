package docs_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
)

// The functions below are the Go blocks of docs/library.md, word for word
// (TestGoBlocksCompile holds each block to this file), so every Go example
// the docs show compiles; TestLibraryExamplesRun runs them.

func runInProject(ctx context.Context, dir, prompt string) error {
	cfg, diags, err := config.Load(ctx, dir, config.Options{Getenv: os.Getenv})
	if err != nil {
		return err
	}
	for _, d := range diags {
		log.Print(d)
	}
	rt, err := cadre.New(cfg)
	if err != nil {
		return err
	}
	for ev, err := range rt.Run(ctx, prompt) {
		if err != nil {
			return err
		}
		if ev.Type == run.EventResult {
			fmt.Println(ev.Result.Text)
		}
	}
	return nil
}

func newRuntime(dir string) (*cadre.Runtime, error) {
	model, err := anthropic.New(anthropic.Config{APIKey: os.Getenv("ANTHROPIC_API_KEY")})
	if err != nil {
		return nil, err
	}
	return cadre.New(cadre.Config{Model: model, ModelID: "claude-sonnet-4-5", Cwd: dir, NoTranscript: true,
		Permissions: &cadre.Permissions{Mode: permission.ModeAcceptEdits}})
}

func scriptedRuntime(dir string) (*cadre.Runtime, *llmtest.Server, error) {
	srv := llmtest.NewServer()
	srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{
		"description":   "find the config loader",
		"prompt":        "EXPLORE: find where the configuration is loaded",
		"subagent_type": "Explore",
	}), llmtest.Text("It is loaded in config.go."))
	srv.Script("EXPLORE", llmtest.Text("Load in config.go reads it."))
	model, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL()})
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	rt, err := cadre.New(cadre.Config{Model: model, ModelID: "claude-sonnet-4-5", Cwd: dir, NoTranscript: true})
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	return rt, srv, nil
}
