package anthropic

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// A streamed call's body used to be copied whole twice after the SDK's
// encoding of the parameters: once to append the kept tools array
// (bodyWithTools), once more by the SDK itself, whose NewStreaming sets
// "stream":true through option.WithJSONSet — sjson parses the body and
// writes it into a new buffer (~80 KB and ~25 allocations per call of a
// 20-tool request). The body is now the SDK's encoding of the parameters
// and the kept tools array side by side, never joined: the SDK is given
// the parameters without their conversation, system prompt and tools
// (it encodes and sets "stream" on a few bytes) and a middleware, the
// SDK's extension point for the *http.Request it sends, puts the parts
// in as the request's body. The bytes on the wire are the ones the two
// copies produced: the encoding, "tools" last but one, "stream" last.

// streamBody is a request body kept in parts: the head of the SDK's
// encoding of the parameters (up to its closing brace), then the tools
// array and the end.
type streamBody struct {
	parts [4][]byte
	size  int64
}

// newStreamBody returns the body of params, the tools array raw (nil for
// none) added as the field "tools" and "stream":true as the last field.
func newStreamBody(params sdk.MessageNewParams, raw []byte) (*streamBody, error) {
	enc, err := params.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode the request: %w", err)
	}
	end := bytes.LastIndexByte(enc, '}')
	if end < 0 {
		return nil, fmt.Errorf("encode the request: not a JSON object: %.40q", enc)
	}
	head := bytes.TrimRight(enc[:end], " \t\r\n")
	if len(head) == 0 || head[len(head)-1] == '{' {
		// Never the case (the model is always set): without a first
		// field the commas below would be wrong.
		return nil, fmt.Errorf("encode the request: no field in %.40q", enc)
	}
	b := &streamBody{}
	b.parts[0] = head
	if len(raw) > 0 {
		b.parts[1] = toolsKey
		b.parts[2] = raw
	}
	b.parts[3] = streamEnd
	for _, p := range b.parts {
		b.size += int64(len(p))
	}
	return b, nil
}

var (
	toolsKey  = []byte(`,"tools":`)
	streamEnd = []byte(`,"stream":true}`)
)

// bytes returns the body in one slice (for tests and logs).
func (b *streamBody) bytes() []byte {
	return bytes.Join(b.parts[:], nil)
}

// middleware sets the request's body to b; the SDK's own encoding of the
// light parameters it was given is dropped.
func (b *streamBody) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	req.Body = &partsReader{parts: b.parts}
	req.GetBody = func() (io.ReadCloser, error) { return &partsReader{parts: b.parts}, nil }
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
