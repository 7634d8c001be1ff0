package llm

// CacheHint points at one content block of a request,
// Request.Messages[Message].Content[Block], that ends a prefix other
// requests share: every fork of one parent turn sends the same bytes up to
// its directive, so the block before the directive is where their common
// cache entry ends (S-6.2). Indices stay valid for every later request of
// the same agent, because earlier messages are never rewritten.
type CacheHint struct {
	Message int `json:"message"`
	Block   int `json:"block"`
}
