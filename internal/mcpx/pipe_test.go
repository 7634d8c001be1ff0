package mcpx

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hostPipe plays the embedding program of an in-process server: it hands
// each message to a go-sdk server over a raw connection and returns the
// response to it, as an SDK host answers mcp_message.
func hostPipe(t *testing.T, s *mcp.Server) MessagePipe {
	t.Helper()
	serverSide, hostSide := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), serverSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := hostSide.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		_ = ss.Wait()
	})
	var mu sync.Mutex
	return func(ctx context.Context, data json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		defer mu.Unlock()
		msg, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			return nil, err
		}
		if err := conn.Write(ctx, msg); err != nil {
			return nil, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			return nil, nil
		}
		for {
			in, err := conn.Read(ctx)
			if err != nil {
				return nil, err
			}
			if r, ok := in.(*jsonrpc.Response); ok && r.ID == req.ID {
				return jsonrpc.EncodeMessage(r)
			}
		}
	}
}

func TestInProcessServer(t *testing.T) {
	t.Parallel()
	failing := InProcessServer("down", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("host went away")
	})
	m := newManager(t, []ServerConfig{InProcessServer("inproc", hostPipe(t, newGoServer("greet"))), failing}, Options{})
	m.Start()
	_ = m.Wait(context.Background())
	st := m.Status()
	if st[0].Name != "down" || st[0].State != StateFailed || !strings.Contains(st[0].Error, "host went away") {
		t.Errorf("down = %+v", st[0])
	}
	if st[1].State != StateConnected || st[1].Transport != InProcess || st[1].Source.Scope != ScopeSDK {
		t.Fatalf("inproc = %+v", st[1])
	}
	if out := run(t, m.Tools(context.Background()), "mcp__inproc__greet", `{"text":"in process"}`); out.IsError || out.Text != "greet: in process" {
		t.Errorf("call = %+v", out)
	}
}
