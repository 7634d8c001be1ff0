// Package temporaltest starts a real Temporal development server (the
// `temporal` CLI's `server start-dev`) on free loopback ports for tests,
// and stops it. One server per test binary is enough: tests share it,
// each with its own task queue.
//
// The binary is $CADRE_TEMPORAL_BIN when set, else looked up in
// $(go env GOPATH)/bin, then on PATH. When it
// is absent a test is skipped with a message saying how to get it —
// unless CADRE_REQUIRE_TEMPORAL=1, when it fails (CI sets it).
package temporaltest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Install is how to get the server binary, for messages.
const Install = "go install github.com/temporalio/cli/cmd/temporal@v1.5.1"

// Server is a running development server.
type Server struct {
	// Address is its frontend's host:port; Namespace the namespace tests use.
	Address   string
	Namespace string
	cmd       *exec.Cmd
	done      chan struct{}
	dir       string
	bin       string
	port      int
	ownDir    bool
}

// Binary returns the path of the temporal CLI, or an error saying how to
// install it.
func Binary() (string, error) {
	if p := os.Getenv("CADRE_TEMPORAL_BIN"); p != "" {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() {
			return "", fmt.Errorf("CADRE_TEMPORAL_BIN=%s is not a file; install the CLI with %s", p, Install)
		}
		return p, nil
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			gopath = strings.TrimSpace(string(out))
		}
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", "temporal")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("the temporal CLI is not on PATH nor in $(go env GOPATH)/bin; install it with %s", Install)
}

// Required reports whether a missing server must fail tests
// (CADRE_REQUIRE_TEMPORAL=1) rather than skip them.
func Required() bool { return os.Getenv("CADRE_REQUIRE_TEMPORAL") == "1" }

// Skip ends t when err (from Start or Binary) says the server is not
// available: a skip with the reason, or a failure when Required.
func Skip(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if Required() {
		t.Fatalf("CADRE_REQUIRE_TEMPORAL=1 and the Temporal dev server is not available: %v", err)
	}
	t.Skipf("no Temporal dev server (%v); these tests need it", err)
}

// Start starts a development server with its database in dir (a
// temporary directory when dir is ""), and returns once it serves.
func Start(ctx context.Context, dir string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	s := &Server{Namespace: "default", bin: bin}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "cadre-temporal-*"); err != nil {
			return nil, fmt.Errorf("temporal dev server: %w", err)
		}
		s.ownDir = true
	}
	s.dir = dir
	if s.port, err = freePort(); err != nil {
		return nil, err
	}
	if err := s.launch(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// launch starts the server process on s.port and waits until it accepts
// connections.
func (s *Server) launch(ctx context.Context) error {
	ui, err := freePort()
	if err != nil {
		return err
	}
	s.Address = "127.0.0.1:" + strconv.Itoa(s.port)
	s.cmd = exec.Command(s.bin, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", strconv.Itoa(s.port),
		"--ui-port", strconv.Itoa(ui), "--db-filename", filepath.Join(s.dir, "temporal.db"), "--log-level", "error")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	log, err := os.Create(filepath.Join(s.dir, "server.log"))
	if err != nil {
		return fmt.Errorf("temporal dev server log: %w", err)
	}
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	log.Close()
	s.done = make(chan struct{})
	cmd, done := s.cmd, s.done
	go func() { _ = cmd.Wait(); close(done) }()
	for {
		conn, err := net.DialTimeout("tcp", s.Address, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-s.done:
			out, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			return fmt.Errorf("temporal dev server exited before serving: %s", strings.TrimSpace(string(out)))
		case <-ctx.Done():
			return fmt.Errorf("temporal dev server on %s: %w", s.Address, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Kill kills the server at once (SIGKILL, as a crash would) and waits for
// it; Restart starts it again on the same port and database.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}

// Restart starts a killed or stopped server again on the same address
// and database.
func (s *Server) Restart(ctx context.Context) error {
	return s.launch(ctx)
}

// DBPath is the server's database file.
func (s *Server) DBPath() string { return filepath.Join(s.dir, "temporal.db") }

// Stop stops the server and removes the directory Start made.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			s.Kill()
		}
	}
	if s.ownDir {
		_ = os.RemoveAll(s.dir)
	}
}

// freePort returns a loopback port nobody listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("find a free port: the listener has no TCP address")
	}
	return addr.Port, nil
}
