package transcript

import (
	"bytes"
	"encoding/json"
	"sync"
)

// lineEncoder is a reusable buffer with a JSON encoder writing into it.
type lineEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// lineEncoders holds scratch encoders between entries: an entry's bytes
// are copied out of one into a slice of their exact size.
var lineEncoders = sync.Pool{New: func() any {
	le := &lineEncoder{}
	le.enc = json.NewEncoder(&le.buf)
	return le
}}

// maxPooledLine is the largest scratch buffer kept for the next entry (a
// big tool result's buffer is let go).
const maxPooledLine = 64 << 10

// encodeLine is v as one transcript line: the bytes json.Marshal makes of
// it and a '\n', in one slice of that size the caller owns (the journal
// keeps it). json.Marshal copied its bytes out and the '\n' appended
// copied them again: two allocations of the entry's size per line.
func encodeLine(v any) ([]byte, error) {
	le := lineEncoders.Get().(*lineEncoder)
	le.buf.Reset()
	err := le.enc.Encode(v) // Marshal's bytes (HTML escaped the same) and '\n'
	var out []byte
	if err == nil {
		out = bytes.Clone(le.buf.Bytes())
	}
	if le.buf.Cap() <= maxPooledLine {
		lineEncoders.Put(le)
	}
	return out, err
}
