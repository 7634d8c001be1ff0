// Package bridge is the remote executor of the cadre binary: an
// executor.Executor that runs no Temporal code itself (the cadre binary
// links none, issue 24) but speaks JSON lines over stdio to one
// `cadre-remote bridge` child process, which holds the Temporal client
// and the Temporal executor. The protocol types here are shared by both
// ends.
package bridge

import (
	"encoding/json"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// Ops of a Request.
const (
	OpStart  = "start"
	OpAttach = "attach"
	OpSend   = "send"
	OpStop   = "stop"
	OpWait   = "wait"
	OpEvents = "events"
	OpLive   = "live"
	OpWork   = "work"
)

// Request is one line from the launcher to the bridge. ID pairs it with
// its Response; Agent names the child of every op but start, attach
// (which carry the spawn request) and live.
type Request struct {
	ID      int64                  `json:"id"`
	Op      string                 `json:"op"`
	Agent   string                 `json:"agent,omitempty"`
	Spawn   *executor.SpawnRequest `json:"spawn,omitempty"`
	Message *executor.Message      `json:"message,omitempty"`
	From    int                    `json:"from,omitempty"`
}

// Response is one line from the bridge: the answer to the request ID, or
// (ID 0) a notification of a background child's end.
type Response struct {
	ID int64 `json:"id"`
	// Error is why the op failed; Refused, for a send, why the message
	// was not delivered (an executor.RefusedError).
	Error   string              `json:"error,omitempty"`
	Refused string              `json:"refused,omitempty"`
	Deliver executor.Delivery   `json:"delivery,omitempty"`
	Result  *run.SubagentResult `json:"result,omitempty"`
	Events  []run.Event         `json:"events,omitempty"`
	Done    bool                `json:"done,omitempty"`
	Live    int                 `json:"live,omitempty"`
	Note    *task.Notification  `json:"note,omitempty"`
	// Work answers OpWork: the child's work from its workspace (nil
	// without one).
	Work *workspace.Result `json:"work,omitempty"`
	// NotFound marks an Error that wraps executor.ErrUnknownChild (an
	// attach to a child the executor does not know).
	NotFound bool `json:"not_found,omitempty"`
}

// encode is a line of v.
func encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
