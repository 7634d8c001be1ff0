package mcpx

import (
	"context"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inProcessProtocol is the MCP version spoken to in-process servers; the
// Agent SDKs' servers speak it (it has initialize, and no
// subscriptions/listen stream that a request/reply pipe cannot carry).
const inProcessProtocol = "2025-11-25"

// pipeTransport is an mcp.Transport over a MessagePipe.
type pipeTransport struct{ send MessagePipe }

func (t pipeTransport) Connect(context.Context) (mcp.Connection, error) {
	if t.send == nil {
		return nil, errors.New("in-process server has no message pipe")
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &pipeConn{send: t.send, ctx: ctx, cancel: cancel, incoming: make(chan jsonrpc.Message, 16)}, nil
}

// pipeConn turns each Write into a call of the pipe in its own goroutine
// (owned by the connection; Close waits for them) and queues the reply
// for Read.
type pipeConn struct {
	send     MessagePipe
	ctx      context.Context
	cancel   context.CancelFunc
	incoming chan jsonrpc.Message
	wg       sync.WaitGroup
	once     sync.Once
	mu       sync.Mutex
	closed   bool
}

func (c *pipeConn) SessionID() string { return "" }

func (c *pipeConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.incoming:
		return m, nil
	case <-c.ctx.Done():
		return nil, mcp.ErrConnectionClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *pipeConn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return mcp.ErrConnectionClosed
	}
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		reply, err := c.send(c.ctx, data)
		var out jsonrpc.Message
		switch {
		case err != nil:
			// A request must still get an answer, or its caller waits
			// for the call timeout.
			if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
				out = &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}}
			}
		case len(reply) > 0 && string(reply) != "null":
			if out, err = jsonrpc.DecodeMessage(reply); err != nil {
				if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
					out = &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "bad reply from in-process server: " + err.Error()}}
				}
			}
		}
		if out == nil {
			return
		}
		select {
		case c.incoming <- out:
		case <-c.ctx.Done():
		}
	}()
	return nil
}

func (c *pipeConn) Close() error {
	c.once.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.cancel()
		c.wg.Wait()
	})
	return nil
}
