package sdkproto

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// MaxLineBytes bounds one line from the program; a longer one ends the
// connection with an error rather than growing without limit.
const MaxLineBytes = 64 << 20

// Handler is what the CLI does with what the program sends. Control
// requests and user messages are handed over one at a time, in the order
// they arrived (so a message sent after initialize finds the session
// initialized), from a goroutine of their own: the answers to the CLI's
// own requests keep flowing meanwhile. Request's result is the success
// payload, or an error the program gets as an error response. Neither may
// block for long: User should only queue the message.
type Handler interface {
	Request(ctx context.Context, subtype string, req json.RawMessage) (any, error)
	User(msg UserMessage)
}

// ErrClosed is returned by Request once the program's input has ended.
var ErrClosed = errors.New("sdk connection closed")

// Conn is one connection to an SDK program: it decodes the lines the
// program writes, routes the answers to the CLI's own requests, and
// writes lines so that they never interleave. Serve owns the reading;
// WriteLine and Request may be called from any goroutine.
type Conn struct {
	r io.Reader

	wmu sync.Mutex
	w   io.Writer

	mu      sync.Mutex
	pending map[string]chan *responseBody
	closed  bool
}

// NewConn returns a connection reading the program's lines from r and
// writing the CLI's to w.
func NewConn(r io.Reader, w io.Writer) *Conn {
	return &Conn{r: r, w: w, pending: map[string]chan *responseBody{}}
}

// WriteLine writes one line (it must end with a newline). Safe for
// concurrent use; the stream-json printer writes through it.
func (c *Conn) WriteLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(b)
	return err
}

func (c *Conn) writeJSON(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return c.WriteLine(b.Bytes())
}

// inbound is a request or a user message waiting for the handler.
type inbound struct {
	user    *UserMessage
	id      string
	subtype string
	body    json.RawMessage
}

// Serve reads the program's lines until its input ends (nil), a line is
// malformed or too long (an error naming it), or ctx ends. Control
// requests go to h.Request and user messages to h.User, in order; answers
// go to the Request calls waiting for them. Serve returns once the
// handler has seen everything that arrived before the end.
func (c *Conn) Serve(ctx context.Context, h Handler) error {
	work := make(chan inbound, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for in := range work {
			if in.user != nil {
				h.User(*in.user)
				continue
			}
			c.answer(ctx, h, in.id, in.subtype, in.body)
		}
	}()
	defer func() {
		close(work)
		<-done
		c.close()
	}()
	sc := bufio.NewScanner(c.r)
	sc.Buffer(make([]byte, 64<<10), MaxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var l line
		if err := json.Unmarshal(raw, &l); err != nil {
			return fmt.Errorf("stdin line %d: not a JSON object: %w", n, err)
		}
		switch l.Type {
		case TypeUser:
			text, err := decodeUser(l.Message)
			if err != nil {
				return fmt.Errorf("stdin line %d: %w", n, err)
			}
			if !send(ctx, work, inbound{user: &UserMessage{Text: text, Raw: append(json.RawMessage(nil), raw...), UUID: l.UUID}}) {
				return ctx.Err()
			}
		case TypeControlRequest:
			var r request
			if l.RequestID == "" || json.Unmarshal(l.Request, &r) != nil || r.Subtype == "" {
				return fmt.Errorf("stdin line %d: a control_request needs a request_id and a request with a subtype", n)
			}
			if !send(ctx, work, inbound{id: l.RequestID, subtype: r.Subtype, body: append(json.RawMessage(nil), l.Request...)}) {
				return ctx.Err()
			}
		case TypeControlResponse:
			if l.Response == nil {
				return fmt.Errorf("stdin line %d: a control_response without a response", n)
			}
			c.deliver(l.Response)
		case TypeControlCancel, TypeKeepAlive:
			// The program withdrew one of its requests (cadre answers
			// them all promptly anyway) or said it is alive.
		default:
			return fmt.Errorf("stdin line %d: unknown message type %q", n, l.Type)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("stdin line %d: longer than %d MiB", n+1, MaxLineBytes>>20)
		}
		return fmt.Errorf("read stdin: %w", err)
	}
	return nil
}

// send queues in for the handler; false when ctx ended first.
func send(ctx context.Context, work chan<- inbound, in inbound) bool {
	select {
	case work <- in:
		return true
	case <-ctx.Done():
		return false
	}
}

// answer runs one request of the program and writes its response.
func (c *Conn) answer(ctx context.Context, h Handler, id, subtype string, body json.RawMessage) {
	resp, err := h.Request(ctx, subtype, body)
	out := responseBody{Subtype: "success", RequestID: id}
	if err != nil {
		out.Subtype, out.Error = "error", err.Error()
	} else if resp != nil {
		b, merr := json.Marshal(resp)
		if merr != nil {
			out.Subtype, out.Error = "error", merr.Error()
		} else {
			out.Response = b
		}
	} else {
		out.Response = json.RawMessage("{}")
	}
	// A write error means stdout is gone; the run notices on its own
	// next write.
	_ = c.writeJSON(line{Type: TypeControlResponse, Response: &out})
}

func (c *Conn) deliver(r *responseBody) {
	c.mu.Lock()
	ch := c.pending[r.RequestID]
	delete(c.pending, r.RequestID)
	c.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// close fails every request still waiting: no answer can come.
func (c *Conn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}

// Request sends a control request to the program and waits for its
// answer: the success payload, or an error with the program's message.
// When ctx ends first the request is withdrawn with a
// control_cancel_request.
func (c *Conn) Request(ctx context.Context, req any) (json.RawMessage, error) {
	id := newRequestID()
	ch := make(chan *responseBody, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	c.pending[id] = ch
	c.mu.Unlock()
	body, err := json.Marshal(req)
	if err != nil {
		c.forget(id)
		return nil, err
	}
	if err := c.writeJSON(line{Type: TypeControlRequest, RequestID: id, Request: body}); err != nil {
		c.forget(id)
		return nil, fmt.Errorf("send control request: %w", err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, ErrClosed
		}
		if r.Subtype == "error" {
			return nil, fmt.Errorf("the SDK answered with an error: %s", r.Error)
		}
		return r.Response, nil
	case <-ctx.Done():
		c.forget(id)
		_ = c.writeJSON(line{Type: TypeControlCancel, RequestID: id})
		return nil, ctx.Err()
	}
}

func (c *Conn) forget(id string) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// newRequestID returns a random id for a CLI request.
func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "cadre-" + hex.EncodeToString(b[:])
}
