package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/transcript"
)

// resumeSession loads the conversation -c/--continue or -r/--resume names
// into cfg: the same session id, so the transcript goes on where it ended.
func resumeSession(p procIO, o *options, cfg *cadre.Config) error {
	if !o.continueLast && o.resume == "" {
		return nil
	}
	if cfg.NoTranscript {
		return errors.New("--continue and --resume need transcripts; they cannot be used with --no-transcript")
	}
	dir := cfg.StateDir
	cwd := cfg.Cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return err
		}
	}
	var path string
	if o.resume != "" {
		if strings.ContainsAny(o.resume, `/\`) || strings.HasPrefix(o.resume, ".") {
			return fmt.Errorf("--resume %q: not a session id", o.resume)
		}
		path = transcript.SessionPath(dir, cwd, o.resume)
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("--resume: no session %s in this directory (%s)", o.resume, filepath.Dir(path))
		}
	} else {
		var err error
		if path, err = latestSession(filepath.Dir(transcript.SessionPath(dir, cwd, "x"))); err != nil {
			return err
		}
	}
	return loadSession(cfg, path, func(msg string) { fmt.Fprintf(p.stderr, "cadre: warning: %s\n", msg) })
}

// loadSession loads the saved session at path into cfg: its conversation
// as History and its id, so the transcript goes on where it ended. The
// print path and the terminal UI's /resume share it. Records an earlier
// crash (or a failed write) cut short are skipped and told to warn, when
// set; calls the crash interrupted get error results saying so
// (transcript.Messages).
func loadSession(cfg *cadre.Config, path string, warn func(string)) error {
	entries, torn, err := transcript.ScanFile(path)
	if err != nil {
		return fmt.Errorf("resume %s: %w", path, err)
	}
	if w := transcript.TornWarning(path, torn); w != "" && warn != nil {
		warn(w)
	}
	msgs := transcript.Messages(entries)
	if len(msgs) == 0 {
		return fmt.Errorf("resume %s: the transcript holds no messages", path)
	}
	cfg.History = msgs
	cfg.SessionID = strings.TrimSuffix(filepath.Base(path), ".jsonl")
	return nil
}

// latestSession is the most recently written session transcript in dir.
func latestSession(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("--continue: %w", err)
	}
	var best string
	var bestTime int64
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if t := info.ModTime().UnixNano(); best == "" || t > bestTime {
			best, bestTime = filepath.Join(dir, e.Name()), t
		}
	}
	if best == "" {
		return "", errors.New("--continue: no earlier session in this directory")
	}
	return best, nil
}
