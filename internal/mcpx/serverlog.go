package mcpx

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server's log (Options.LogDir/<server>.log) holds what it wrote to
// stderr (stdio servers) and the notifications it sent that have no other
// place to go: log messages (notifications/message) and progress
// (notifications/progress), one stamped line each, so nothing a server
// says is silently lost.

// logLevel is the level cadre asks servers to log at (logging/setLevel,
// and the per-request log level of newer protocol versions).
//
//lint:ignore SA1019 MCP logging (deprecated by SEP-2577, still served in its deprecation window) is how servers' logs reach the log file
const logLevel mcp.LoggingLevel = "info"

// openLog opens the log at path for appending, creating its directory. It
// returns nil when path is "" or the file cannot be opened (the log is a
// convenience; a server does not fail for want of one).
func openLog(path string) *os.File {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil
	}
	return f
}

// note appends one stamped line to the server's log.
func (c *conn) note(line string) {
	f := openLog(logPath(c.opts, c.cfg.Name))
	if f == nil {
		return
	}
	defer f.Close()
	line = strings.ReplaceAll(strings.TrimRight(line, "\n"), "\n", "\n    ")
	// One write, so lines of concurrent writers (the stderr copier) stay whole.
	_, _ = io.WriteString(f, time.Now().UTC().Format(time.RFC3339Nano)+" "+line+"\n")
}

// noteLog records a notifications/message from the server.
//
//lint:ignore SA1019 MCP logging (deprecated by SEP-2577, still served in its deprecation window) is how servers' logs reach the log file
func (c *conn) noteLog(p *mcp.LoggingMessageParams) {
	if p == nil {
		return
	}
	data, ok := p.Data.(string)
	if !ok {
		b, err := json.Marshal(p.Data)
		if err != nil {
			data = fmt.Sprint(p.Data)
		} else {
			data = string(b)
		}
	}
	who := ""
	if p.Logger != "" {
		who = " " + p.Logger + ":"
	}
	c.note(fmt.Sprintf("[log %s]%s %s", p.Level, who, data))
}

// noteProgress records a notifications/progress from the server.
func (c *conn) noteProgress(p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	line := fmt.Sprintf("[progress %v] %g", p.ProgressToken, p.Progress)
	if p.Total > 0 {
		line += fmt.Sprintf("/%g", p.Total)
	}
	if p.Message != "" {
		line += " " + p.Message
	}
	c.note(line)
}

// perRequestLogLevel reports whether the session speaks a protocol version
// whose requests carry their log level in _meta (2026-07-28 and later)
// rather than taking it once from logging/setLevel.
func perRequestLogLevel(init *mcp.InitializeResult) bool {
	return init != nil && init.ProtocolVersion >= "2026-07-28"
}
