package openai

// OverHTTP reports that the model's requests go over HTTP with the
// request's context (see llm.OverHTTP).
func (m *Model) OverHTTP() bool { return true }
