package retry

import (
	"bytes"
	"encoding/json"
	"testing"
	"testing/iotest"
)

// TestStreamBodyReadsAsOneSlice checks the parts reader against the
// joined bytes with iotest's reads of every size, WriteTo included, and
// the fields the body ends with.
func TestStreamBodyReadsAsOneSlice(t *testing.T) {
	enc := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}` + "\n")
	b, err := NewStreamBody(enc, []byte(`[{"name":"T"}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := b.Bytes()
	if string(want) != `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"T"}],"stream":true}` || int64(len(want)) != b.Len() {
		t.Fatalf("body %s (Len %d)", want, b.Len())
	}
	if err := iotest.TestReader(b.Reader(), want); err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	if n, err := b.Reader().(*partsReader).WriteTo(&w); err != nil || n != b.Len() || !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("WriteTo: %d, %v", n, err)
	}
	nb, err := NewStreamBody(enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := nb.Bytes(); string(got) != `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}` || !json.Valid(got) {
		t.Fatalf("body without tools %s", got)
	}
	for _, bad := range []string{``, `[1]`, `{}`, ` { } `} {
		if _, err := NewStreamBody([]byte(bad), nil); err == nil {
			t.Errorf("NewStreamBody(%q) took it", bad)
		}
	}
}
