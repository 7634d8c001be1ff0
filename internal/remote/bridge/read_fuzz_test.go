package bridge

import (
	"bytes"
	"testing"

	"github.com/cadre-dev/cadre/task"
)

// Whatever the bridge process writes, the launcher's reader neither
// panics nor leaves a call waiting: every pending call gets its answer
// or, once the output ends or turns bad, the error that says so.
func FuzzBridgeOutput(f *testing.F) {
	f.Add([]byte(`{"id":1,"live":2}` + "\n"))
	f.Add([]byte(`{"id":1,"error":"boom"}` + "\n" + `{"id":2}` + "\n"))
	f.Add([]byte("not json\n"))
	f.Add([]byte(`{"id":0,"note":{"task_id":"a1","status":"completed"}}` + "\n"))
	f.Add([]byte(`{"id":1,"events":[{"Type":"task_started"}],"done":true}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var notes int
		x := &Executor{done: make(chan struct{}), pending: map[int64]chan Response{}, cfg: Config{Notify: func(task.Notification) { notes++ }}}
		chans := map[int64]chan Response{}
		for id := int64(1); id <= 3; id++ {
			chans[id] = make(chan Response, 1)
			x.pending[id] = chans[id]
		}
		x.read(bytes.NewReader(data))
		<-x.done
		if x.dead == nil {
			t.Fatal("the reader ended without saying why")
		}
		for id, ch := range chans {
			select {
			case r := <-ch:
				if r.ID != id {
					t.Fatalf("call %d got the answer to %d", id, r.ID)
				}
			default:
				t.Fatalf("call %d was left waiting", id)
			}
		}
		if len(x.pending) != 0 {
			t.Fatalf("%d calls still pending", len(x.pending))
		}
	})
}
