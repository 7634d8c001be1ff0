package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/tool"
)

// itemKind says what a conversation item shows.
type itemKind int

const (
	itemUser itemKind = iota
	itemAssistant
	itemThinking
	itemTool
	itemError
	itemInfo
	itemNotification
)

// item is one entry of a conversation: a prompt, an answer, a tool call
// with its result, an error, a notice or a task notification. Its render
// is cached by width and version.
type item struct {
	kind itemKind
	text string
	// done is set when an answer finished streaming or a call ended.
	done bool
	// plain items (notices, tables) are shown verbatim, not as Markdown.
	plain bool

	// Tool calls.
	callID   string
	name     string
	summary  string
	input    []byte
	result   string
	isError  bool
	denied   bool
	duration time.Duration

	note *Notification
	// todos is the list a TodoWrite call wrote (todos.go).
	todos []tool.Todo

	// ver counts changes; the render cache is valid while it matches.
	ver   int
	cache renderCache
}

type renderCache struct {
	ver      int
	width    int
	expanded bool
	extra    string // anything else the render depended on
	lines    []string
}

func (it *item) touch() { it.ver++ }

// convo is the conversation of one agent, built from its events.
type convo struct {
	agentID string
	cwd     string
	items   []*item
	tools   map[string]*item
	// streaming is the answer being streamed, thinking its thinking.
	streaming *item
	thinking  *item
	// todos is the agent's current todo list (todos.go).
	todos []tool.Todo
	// printed counts the items already written to the terminal's
	// scrollback (inline mode); they are not drawn again.
	printed int
}

func newConvo(agentID, cwd string) *convo {
	return &convo{agentID: agentID, cwd: cwd, tools: map[string]*item{}}
}

func (c *convo) add(it *item) *item {
	c.items = append(c.items, it)
	return it
}

// addUser adds a prompt the user (or, for a sub-agent, its parent) sent.
func (c *convo) addUser(text string) { c.add(&item{kind: itemUser, text: text, done: true}) }

// addInfo adds a notice shown verbatim.
func (c *convo) addInfo(text string) {
	c.add(&item{kind: itemInfo, text: text, done: true, plain: true})
}

// addError adds an error.
func (c *convo) addError(text string) {
	c.add(&item{kind: itemError, text: text, done: true, plain: true})
}

// apply folds one of the agent's events into the conversation.
func (c *convo) apply(ev run.Event) {
	switch ev.Type {
	case run.EventText:
		if c.streaming == nil {
			c.streaming = c.add(&item{kind: itemAssistant})
		}
		c.streaming.text += ev.Text
		c.streaming.touch()
	case run.EventThinking:
		if c.thinking == nil {
			c.thinking = c.add(&item{kind: itemThinking})
		}
		c.thinking.text += ev.Text
		c.thinking.touch()
	case run.EventRetry:
		c.drop(c.streaming)
		c.drop(c.thinking)
		c.streaming, c.thinking = nil, nil
		if r := ev.Retry; r != nil {
			c.addInfo(retryText(r))
		}
	case run.EventAssistant:
		c.finishAnswer(ev.Message)
	case run.EventToolStart:
		if ev.Call != nil {
			c.startTool(ev.Call)
		}
	case run.EventToolEnd:
		if ev.Call != nil && ev.ToolResult != nil {
			c.endTool(ev.Call, ev.ToolResult)
		}
	case run.EventTodos:
		c.applyTodos(ev.Todos)
	case run.EventCompacting, run.EventCompactBoundary, run.EventContextWarning:
		if ev.Compact != nil {
			c.addInfo(compactionText(ev.Type, ev.Compact)) // compact.go
		}
	}
}

func retryText(r *llm.Retry) string {
	what := r.Err
	if r.Status != 0 {
		what = fmt.Sprintf("HTTP %d: %s", r.Status, r.Err)
	}
	return fmt.Sprintf("Model request failed (%s); retrying in %v (attempt %d).", oneLine(what), r.Wait, r.Attempt)
}

// drop removes an item that turned out void (text streamed before a
// retry).
func (c *convo) drop(it *item) {
	if it == nil {
		return
	}
	for i := len(c.items) - 1; i >= 0; i-- {
		if c.items[i] == it {
			c.items = append(c.items[:i], c.items[i+1:]...)
			if c.printed > i {
				c.printed--
			}
			return
		}
	}
}

// finishAnswer ends the streamed answer: the complete message's text
// replaces what was streamed, and an answer made only of tool calls
// leaves no empty item.
func (c *convo) finishAnswer(msg *llm.Message) {
	if t := c.thinking; t != nil {
		t.done = true
		t.touch()
		c.thinking = nil
	}
	it := c.streaming
	c.streaming = nil
	text := ""
	if msg != nil {
		text = strings.TrimSpace(msg.Text())
	}
	if it == nil {
		if text == "" {
			return
		}
		it = c.add(&item{kind: itemAssistant})
	}
	if text == "" {
		c.drop(it)
		return
	}
	it.text, it.done = text, true
	it.touch()
}

func (c *convo) startTool(call *llm.Block) {
	if c.streaming != nil {
		// The answer's text came before its calls.
		c.streaming.done = true
		c.streaming.touch()
		c.streaming = nil
	}
	it := c.add(&item{kind: itemTool, callID: call.ID, name: call.Name, input: call.Input,
		summary: summarizeCall(call.Name, call.Input, c.cwd)})
	if call.ID != "" {
		c.tools[call.ID] = it
	}
}

func (c *convo) endTool(call *llm.Block, res *run.ToolResult) {
	it := c.tools[call.ID]
	if it == nil {
		c.startTool(call)
		it = c.items[len(c.items)-1]
	}
	it.result, it.isError, it.denied, it.duration, it.done = res.Text, res.IsError, res.Denied, res.Duration, true
	it.touch()
}

// tool returns the item of a tool call, or nil.
func (c *convo) tool(callID string) *item { return c.tools[callID] }

// agentPrompt is the prompt an Agent call gave its child, from the call's
// input.
func agentPrompt(it *item) string {
	if it == nil || (it.name != tool.Agent && it.name != tool.Task) {
		return ""
	}
	return field(inputFields(it.input), "prompt")
}

// closeOpen marks every call still open as ended without a result (the
// turn was interrupted or failed) and ends any streaming answer.
func (c *convo) closeOpen(why string) {
	if c.streaming != nil {
		c.streaming.done = true
		c.streaming.touch()
		c.streaming = nil
	}
	if c.thinking != nil {
		c.thinking.done = true
		c.thinking.touch()
		c.thinking = nil
	}
	for _, it := range c.items {
		if it.kind == itemTool && !it.done {
			it.done, it.isError, it.result = true, true, why
			it.touch()
		}
	}
}
