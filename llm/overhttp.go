package llm

// OverHTTP reports whether m sends its requests to a server over HTTP
// (rather than answering in process): m, or the model it wraps, has an
// OverHTTP method that says so. The engine holds a sub-agent's files back
// until the server has its first request only then: in process there is
// no server to leave the machine to.
func OverHTTP(m Model) bool {
	h, ok := m.(interface{ OverHTTP() bool })
	return ok && h.OverHTTP()
}

// OverHTTP reports whether the wrapped model sends over HTTP.
func (f *fallbackModel) OverHTTP() bool { return OverHTTP(f.m) }
