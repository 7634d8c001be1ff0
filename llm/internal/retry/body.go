package retry

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// Both SDKs' NewStreaming set "stream":true through option.WithJSONSet,
// which parses the encoded body with sjson and writes it into a new
// buffer: a copy of the whole body per request, on top of the one a
// caller adding a field of its own makes. A StreamBody is the body kept
// in parts instead — the SDK's encoding of the parameters up to its
// closing brace, an optional "tools" array, and "stream":true — which its
// Middleware (the SDKs' extension point for the *http.Request they send)
// puts in as the request's body; the SDK is given the parameters without
// their large fields and encodes and sets "stream" on a few bytes, which
// the middleware drops. The bytes on the wire are the ones the copies
// made: the encoding, "tools" last but one, "stream" last.

// StreamBody is a streamed request's body kept in parts.
type StreamBody struct {
	parts [4][]byte
	size  int64
}

var (
	toolsKey  = []byte(`,"tools":`)
	streamEnd = []byte(`,"stream":true}`)
)

// NewStreamBody returns the body of the encoded parameters enc (a JSON
// object with at least one field) with the array tools, unless empty,
// added as the field "tools" and "stream":true as the last field. The
// body holds enc and tools: they must not change while it is sent.
func NewStreamBody(enc, tools []byte) (*StreamBody, error) {
	end := bytes.LastIndexByte(enc, '}')
	if end < 0 {
		return nil, fmt.Errorf("encode the request: not a JSON object: %.40q", enc)
	}
	head := bytes.TrimRight(enc[:end], " \t\r\n")
	if len(head) == 0 || head[len(head)-1] == '{' {
		return nil, fmt.Errorf("encode the request: no field in %.40q", enc)
	}
	b := &StreamBody{}
	b.parts[0] = head
	if len(tools) > 0 {
		b.parts[1], b.parts[2] = toolsKey, tools
	}
	b.parts[3] = streamEnd
	for _, p := range b.parts {
		b.size += int64(len(p))
	}
	return b, nil
}

// Len returns the body's length in bytes.
func (b *StreamBody) Len() int64 { return b.size }

// Bytes returns the body in one slice (for tests and logs).
func (b *StreamBody) Bytes() []byte { return bytes.Join(b.parts[:], nil) }

// Reader returns a reader of the body from its start.
func (b *StreamBody) Reader() io.ReadCloser { return &partsReader{parts: b.parts} }

// Middleware sets the request's body to b, dropping the one the SDK
// encoded; it has the signature of both SDKs' option.Middleware.
func (b *StreamBody) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	req.Body = b.Reader()
	req.GetBody = func() (io.ReadCloser, error) { return b.Reader(), nil }
	req.ContentLength = b.size
	return next(req)
}

// partsReader reads a body's parts in order without joining them.
type partsReader struct {
	parts [4][]byte
	i     int
}

// Read implements io.Reader.
func (r *partsReader) Read(p []byte) (int, error) {
	for r.i < len(r.parts) && len(r.parts[r.i]) == 0 {
		r.i++
	}
	if r.i == len(r.parts) {
		return 0, io.EOF
	}
	n := copy(p, r.parts[r.i])
	r.parts[r.i] = r.parts[r.i][n:]
	return n, nil
}

// WriteTo implements io.WriterTo, so a copy needs no buffer of its own.
func (r *partsReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for ; r.i < len(r.parts); r.i++ {
		p := r.parts[r.i]
		if len(p) == 0 {
			continue
		}
		n, err := w.Write(p)
		total += int64(n)
		r.parts[r.i] = p[n:]
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// Close implements io.Closer; the parts are not the reader's to free.
func (r *partsReader) Close() error { return nil }
