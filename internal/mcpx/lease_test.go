package mcpx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// agentRun stands for the runtime running one agent: acquire its servers,
// release them on the way out whatever happens, and end the way asked.
func agentRun(ctx context.Context, m *Manager, req AgentServers, pids chan<- int, end string) (err error) {
	lease, err := m.Acquire(ctx, req)
	if err != nil {
		return err
	}
	defer lease.Release()
	for _, c := range lease.inline {
		pids <- c.proc.Pid()
	}
	close(pids)
	if toolByName(lease.Tools(ctx), "mcp__mine__echo") == nil {
		return errors.New("inline server's tools missing")
	}
	switch end {
	case "error":
		return errors.New("the agent failed")
	case "panic":
		panic("the agent panicked")
	case "cancel":
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func TestInlineServerStopsOnEveryExitPath(t *testing.T) {
	t.Parallel()
	m := newManager(t, nil, Options{})
	for _, end := range []string{"success", "error", "cancel", "panic"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pids := make(chan int, 1)
			done := make(chan error, 1)
			// In the test's goroutine: a missing server skips (or fails)
			// the test, which a goroutine of its own cannot do.
			mine := everything(t, "mine")
			go func() {
				defer func() {
					if r := recover(); r != nil {
						done <- fmt.Errorf("panic: %v", r)
					}
				}()
				done <- agentRun(ctx, m, AgentServers{Inline: []ServerConfig{mine}}, pids, end)
			}()
			pid, ok := <-pids
			if !ok || pid == 0 {
				t.Fatalf("no inline server started: %v", <-done)
			}
			if alive := groupAlive(t, pid); len(alive) == 0 {
				t.Fatalf("server %d not running while the agent runs", pid)
			}
			if end == "cancel" {
				cancel()
			}
			err := <-done
			if want := map[string]string{"success": "", "error": "the agent failed", "cancel": "context canceled", "panic": "the agent panicked"}[end]; want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
				t.Fatalf("agent ended with %v", err)
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); !os.IsNotExist(err) {
				t.Errorf("/proc/%d still exists after the agent ended (%v)", pid, err)
			}
			if alive := groupAlive(t, pid); len(alive) != 0 {
				t.Errorf("process group %d still has %v", pid, alive)
			}
		})
	}
}

func TestSharedServersAreReferenceCounted(t *testing.T) {
	t.Parallel()
	m := newManager(t, []ServerConfig{everything(t, "shared")}, Options{})
	// No Start: only agents hold the server.
	if st := m.Status()[0]; st.State != StateIdle {
		t.Fatalf("state before any agent = %s", st.State)
	}
	ctx := context.Background()
	a, err := m.Acquire(ctx, AgentServers{Names: []string{"shared"}, Required: []string{"shared"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Acquire(ctx, AgentServers{Names: []string{"shared", "nobody"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], `"nobody"`) {
		t.Errorf("warnings = %q", b.Warnings)
	}
	pid := m.shared["shared"].c.proc.Pid()
	if toolByName(a.Tools(ctx), "mcp__shared__echo") == nil {
		t.Fatal("lease a has no shared tools")
	}
	a.Release()
	a.Release() // twice is fine
	if st := m.Status()[0]; st.State != StateConnected {
		t.Fatalf("state with one holder left = %s", st.State)
	}
	b.Release()
	if st := m.Status()[0]; st.State != StateIdle {
		t.Fatalf("state after the last holder = %s", st.State)
	}
	if alive := groupAlive(t, pid); len(alive) != 0 {
		t.Errorf("shared server still running after its last holder: %v", alive)
	}
	// The main agent's session holds it from Start on.
	m.Start()
	waitConnected(t, m)
	c, err := m.Acquire(ctx, AgentServers{Names: []string{"shared"}})
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	if st := m.Status()[0]; st.State != StateConnected {
		t.Fatalf("a session-held server stopped when an agent released it: %s", st.State)
	}
}

func TestRequiredServers(t *testing.T) {
	t.Parallel()
	memory := npmBin(t, "mcp-server-memory")
	m := newManager(t, []ServerConfig{
		{Name: "broken", Transport: Stdio, Command: "sh", Args: []string{"-c", "echo cannot start >&2; exit 1"}},
		{Name: "toolless", Transport: HTTP, URL: goServer(t, HTTP, newGoServer(), "")},
		// Never answers.
		{Name: "mute", Transport: Stdio, Command: "sleep", Args: []string{"600"}},
	}, Options{RequiredWait: 5 * time.Second, RequiredPoll: 100 * time.Millisecond, ConnectTimeout: 60 * time.Second})
	m.Start()
	ctx := context.Background()

	t.Run("slow is awaited", func(t *testing.T) {
		t.Parallel()
		// Connects 2 s after it starts; nothing starts it before Acquire,
		// so Acquire has to wait for it.
		slow := newManager(t, []ServerConfig{
			{Name: "slow", Transport: Stdio, Command: "sh", Args: []string{"-c", `sleep 2; exec "$0"`, memory}},
		}, Options{RequiredWait: 2 * time.Minute, RequiredPoll: 100 * time.Millisecond, ConnectTimeout: 2 * time.Minute})
		l, err := slow.Acquire(ctx, AgentServers{Required: []string{"slow"}})
		if err != nil {
			t.Fatalf("slow server not awaited: %v", err)
		}
		defer l.Release()
		if toolByName(l.Tools(ctx), "mcp__slow__read_graph") == nil {
			t.Error("slow server's tools missing")
		}
	})
	for name, want := range map[string]string{
		"broken":   `required MCP server "broken" failed to connect: `,
		"toolless": `required MCP server "toolless" is connected but offers no tools`,
		"mute":     `required MCP server "mute" is still connecting after 5s`,
		"absent":   `required MCP server "absent" is not configured`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l, err := m.Acquire(ctx, AgentServers{Required: []string{name}})
			var re *RequiredError
			if !errors.As(err, &re) || re.Server != name || !strings.HasPrefix(err.Error(), want) {
				if l != nil {
					l.Release()
				}
				t.Fatalf("err = %v, want %q…", err, want)
			}
		})
	}
}

func TestRequiredInlineServer(t *testing.T) {
	t.Parallel()
	m := newManager(t, nil, Options{})
	l, err := m.Acquire(context.Background(), AgentServers{Inline: []ServerConfig{everything(t, "mine")}, Required: []string{"mine"}})
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	_, err = m.Acquire(context.Background(), AgentServers{
		Inline:   []ServerConfig{{Name: "bad", Transport: Stdio, Command: "/nonexistent"}},
		Required: []string{"bad"},
	})
	if err == nil || !strings.Contains(err.Error(), `"bad"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestCloseStopsEverything(t *testing.T) {
	t.Parallel()
	m, err := New([]ServerConfig{everything(t, "s")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	l, err := m.Acquire(context.Background(), AgentServers{Inline: []ServerConfig{everything(t, "mine")}, Required: []string{"s"}})
	if err != nil {
		t.Fatal(err)
	}
	pids := []int{m.shared["s"].c.proc.Pid(), l.inline[0].proc.Pid()}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive := groupAlive(t, pid); len(alive) != 0 {
			t.Errorf("group %d alive after Close: %v", pid, alive)
		}
	}
	l.Release() // after Close: harmless
	if _, err := m.Acquire(context.Background(), AgentServers{}); err == nil {
		t.Error("Acquire after Close succeeded")
	}
}

// A stdio server runs in its own process group and is stopped with it: a
// helper the server left running (here a sleep started by the wrapper
// script that then execs the server) is gone once the lease is released,
// and once the server has crashed. A helper that left the group (setsid)
// and holds the server's stdout open does not hang the call that crashed
// the server: it ends as an error result naming the server.
func TestServerProcessGroupIsStopped(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, end := range []string{"release", "crash", "crash-escaped"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			script, members := `sleep 600 & exec "$0"`, 2
			helperPid := filepath.Join(t.TempDir(), "helper")
			if end == "crash-escaped" {
				script, members = `setsid sh -c 'echo $$ >"$0"; exec sleep 600' "$1" & exec "$0"`, 1
			}
			srv := ServerConfig{Name: "grp", Transport: Stdio, Command: "sh",
				Args: []string{"-c", script, exe, helperPid}, Env: map[string]string{"MCPX_TEST_SERVER": "1"}}
			m := newManager(t, nil, Options{})
			ctx := context.Background()
			l, err := m.Acquire(ctx, AgentServers{Inline: []ServerConfig{srv}, Required: []string{"grp"}})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()
			if end == "crash-escaped" {
				var pid int
				for deadline := time.Now().Add(time.Minute); pid == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					b, _ := os.ReadFile(helperPid)
					pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				}
				if pid == 0 {
					t.Fatal("the escaped helper wrote no pid")
				}
				t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			}
			pgid := l.inline[0].proc.Pid()
			if got := groupAlive(t, pgid); len(got) != members {
				t.Fatalf("process group %d holds %v, want %d members", pgid, got, members)
			}
			switch end {
			case "release":
				l.Release()
				// Release killed the group; a SIGKILL is delivered
				// asynchronously, so a member may still be on its way
				// out for a moment (seen on a loaded machine).
				deadline := time.Now().Add(time.Minute)
				for len(groupAlive(t, pgid)) != 0 && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
			default:
				out := run(t, l.Tools(ctx), "mcp__grp__crash", `{}`)
				if !out.IsError || !strings.Contains(out.Text, `"grp"`) || !strings.Contains(out.Text, "about to fall over") {
					t.Fatalf("crash = %+v", out)
				}
				// The crash is noticed in the background; the group is
				// killed once the server's exit is seen.
				deadline := time.Now().Add(time.Minute)
				for len(groupAlive(t, pgid)) != 0 && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
			}
			if got := groupAlive(t, pgid); len(got) != 0 {
				t.Fatalf("process group %d still holds %v after %s", pgid, got, end)
			}
		})
	}
}
