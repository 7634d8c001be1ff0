package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/cadre-dev/cadre/tool"
)

// The tools that change a file (Write, Edit, MultiEdit, NotebookEdit) share
// one guard and one commit: the file must be a regular file the agent has
// read and that has not changed since, and the new content is written
// atomically and recorded as what the agent now knows.

// current is a file about to be changed.
type current struct {
	// exists is false when there is no file at the path.
	exists bool
	// data is the file's content (nil unless read was asked for).
	data []byte
}

// openForChange checks path before a change ("edit" or "overwrite" in
// messages) and reads it when read is set. A missing file is not a
// problem here (exists is false); the caller decides whether it may be
// created. The problem text is for the model.
func openForChange(env *tool.Env, path, verb string, read bool) (current, string) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return current{}, ""
	case err != nil:
		return current{}, fmt.Sprintf("cannot %s %s: %v", verb, path, err)
	case fi.IsDir():
		return current{}, fmt.Sprintf("%s is a directory, not a file", path)
	case !fi.Mode().IsRegular():
		return current{}, fmt.Sprintf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if p := checkFresh(env, path, fi, verb); p != "" {
		return current{}, p
	}
	c := current{exists: true}
	if read {
		if c.data, err = os.ReadFile(path); err != nil {
			return current{}, fmt.Sprintf("cannot read %s: %v", path, err)
		}
	}
	return c, ""
}

// commitChange writes data to path atomically and records the new stamp
// in the agent's file state, so a following edit needs no new Read.
func commitChange(env *tool.Env, path string, data []byte) error {
	fi, err := atomicWrite(path, data)
	if err != nil {
		return err
	}
	if st := fileState(env); st != nil {
		st.Record(path, stampOf(fi, false))
	}
	return nil
}

// missingFile says that path does not exist, with a did-you-mean, and how
// to create it (hint).
func missingFile(path, hint string) string {
	msg := fmt.Sprintf("File does not exist: %s", path)
	if s := didYouMean(path); s != "" {
		msg += fmt.Sprintf(". Did you mean %s?", s)
	}
	if hint != "" {
		msg += " (" + hint + ")"
	}
	return msg
}
