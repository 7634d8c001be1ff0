package tui

// convoPane is the conversation on screen: the main agent's, a
// sub-agent's opened from the tree, or a saved session's shown read-only;
// scrolled with the page keys and the wheel, its tool results collapsed
// or expanded (Ctrl+O). In inline mode what is finished goes to the
// terminal's scrollback and is not drawn again.
type convoPane struct {
	st   *styles
	cfg  *config
	tree *Tree
	perm *permissionDialog // calls waiting for an answer say so
	md   markdown

	convos map[string]*convo
	// view is the agent whose conversation is shown ("" for main), or a
	// saved session's key (viewSession).
	view     string
	scroll   int
	expanded bool
	// sessions are saved sessions loaded for viewing, by view key.
	sessions map[string]sessionInfo
	// noteAt is where notifications the main agent is told of go in its
	// conversation: after what it did before the request that carried
	// them, before the answer to them (notifications.go).
	noteAt int
}

// reset forgets every conversation (after /clear or when another
// session opens).
func (p *convoPane) reset() {
	p.convos = map[string]*convo{"": newConvo("", p.cfg.cwd)}
	p.view, p.scroll = "", 0
	p.sessions = map[string]sessionInfo{}
}

// show puts an agent's conversation (or a saved session's) on screen,
// scrolled to its end; "" is the main agent's.
func (p *convoPane) show(view string) { p.view, p.scroll = view, 0 }

// scrollBy scrolls the conversation up n lines (down when negative).
func (p *convoPane) scrollBy(n int) {
	p.scroll = max(0, p.scroll+n)
}

// main is the main agent's conversation.
func (p *convoPane) main() *convo { return p.convos[""] }

// convoOf returns the conversation of an agent, making it on first use.
func (p *convoPane) convoOf(agentID string) *convo {
	c := p.convos[agentID]
	if c == nil {
		c = newConvo(agentID, p.cfg.cwd)
		p.convos[agentID] = c
	}
	return c
}
