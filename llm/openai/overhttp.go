package openai

// OverHTTP reports that the model's requests go to a server over HTTP
// (see llm.OverHTTP).
func (m *Model) OverHTTP() bool { return true }
