package llmtest

import "testing"

// Check fails t with every violation recorded so far (see
// [Server.Violations]). Call it at the end of a test, typically through
// t.Cleanup, after the agent under test has finished.
func (s *Server) Check(t testing.TB) {
	t.Helper()
	for _, v := range s.Violations() {
		t.Errorf("llmtest: %s", v)
	}
}
