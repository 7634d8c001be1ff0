package llm

// OverHTTP reports whether m sends its requests over HTTP with the
// request's context, so that net/http's client trace in that context
// (httptrace.WithClientTrace) sees each request written: m, or the model
// it wraps, has an OverHTTP method that says so. The engine uses it to
// know when a sub-agent's first request is out.
func OverHTTP(m Model) bool {
	h, ok := m.(interface{ OverHTTP() bool })
	return ok && h.OverHTTP()
}

// OverHTTP reports whether the wrapped model sends over HTTP.
func (f *fallbackModel) OverHTTP() bool { return OverHTTP(f.m) }
