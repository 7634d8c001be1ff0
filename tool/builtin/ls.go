package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/cadre-dev/cadre/tool"
)

//go:embed ls.md
var lsDescription string

type lsInput struct {
	Path   string   `json:"path,omitempty" jsonschema_description:"Directory (default: the working directory)."`
	Ignore []string `json:"ignore,omitempty" jsonschema_description:"Globs to leave out (*.log, build/**)."`
}

// NewLS returns the LS tool: a directory tree with entry types and file
// sizes, breadth first up to a cap, leaving out what .gitignore ignores.
func NewLS(cfg Config) tool.Tool {
	cfg = cfg.withDefaults()
	return tool.Func(tool.FuncConfig{Name: tool.LS, Subject: tool.BuiltinSubject(tool.LS), Description: lsDescription, ReadOnly: true},
		func(ctx context.Context, env *tool.Env, in lsInput) (tool.Output, error) {
			return runLS(ctx, cfg, env, in), nil
		})
}

// lsNode is one entry of the tree being listed.
type lsNode struct {
	name     string
	mode     fs.FileMode
	size     int64
	target   string // symlink target
	children []*lsNode
	expanded bool // a directory whose entries were read
	pruned   int  // entries left out by .gitignore or the ignore globs
}

// lsDir is a directory waiting in the breadth-first queue.
type lsDir struct {
	node  *lsNode
	abs   string
	rel   string
	chain *ignoreDir
}

func runLS(ctx context.Context, cfg Config, env *tool.Env, in lsInput) tool.Output {
	root, problem := searchRoot(env, in.Path)
	if problem != "" {
		return tool.Errorf("%s", problem)
	}
	for _, g := range in.Ignore {
		if !doublestar.ValidatePattern(g) {
			return tool.Errorf("invalid ignore pattern %q", g)
		}
	}
	fi, err := os.Stat(root)
	if err != nil {
		return tool.Errorf("cannot list %s: %v", root, err)
	}
	if !fi.IsDir() {
		return tool.Errorf("%s is a file, not a directory: use Read to see its content", root)
	}
	top := &lsNode{name: root, mode: fs.ModeDir}
	queue := []lsDir{{node: top, abs: root, chain: parentIgnores(root)}}
	count, truncated := 0, false
	for len(queue) > 0 && !truncated {
		if err := ctx.Err(); err != nil {
			return tool.Errorf("listing %s stopped: %v", root, err)
		}
		d := queue[0]
		queue = queue[1:]
		entries, err := os.ReadDir(d.abs)
		if err != nil {
			if d.node == top {
				return tool.Errorf("cannot list %s: %v", root, err)
			}
			continue // unreadable subdirectories stay unexpanded
		}
		_, hasGI := os.Stat(filepath.Join(d.abs, ".gitignore"))
		_, hasGit := os.Stat(filepath.Join(d.abs, ".git"))
		chain := loadIgnoreDir(d.chain, d.abs, hasGI == nil, hasGit == nil)
		d.node.expanded = true
		for _, e := range entries {
			abs := filepath.Join(d.abs, e.Name())
			rel := e.Name()
			if d.rel != "" {
				rel = d.rel + "/" + e.Name()
			}
			isDir := e.IsDir()
			if e.Name() == ".git" || env.IsHidden(abs) || chain.match(abs, isDir) == matchIgnore || ignoredByGlobs(in.Ignore, e.Name(), rel) {
				d.node.pruned++
				continue
			}
			if count == cfg.LSLimit {
				truncated = true
				break
			}
			count++
			n := &lsNode{name: e.Name(), mode: e.Type()}
			if info, err := e.Info(); err == nil {
				n.mode, n.size = info.Mode(), info.Size()
			}
			if n.mode&fs.ModeSymlink != 0 {
				n.target, _ = os.Readlink(abs)
			}
			d.node.children = append(d.node.children, n)
			if isDir {
				queue = append(queue, lsDir{node: n, abs: abs, rel: rel, chain: chain})
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s/\n", strings.TrimSuffix(root, "/"))
	writeLSTree(&b, top, 1)
	if truncated {
		fmt.Fprintf(&b, "\n(Listing cut at %d entries, breadth first: directories marked \"not listed\" were not opened. List a subdirectory, or use Glob, to see more.)\n", cfg.LSLimit)
	}
	if count == 0 {
		b.WriteString("  (empty)\n")
	}
	return tool.Output{Text: b.String()}
}

// ignoredByGlobs reports whether a user ignore glob matches the entry's
// name or its path relative to the listed directory.
func ignoredByGlobs(globs []string, name, rel string) bool {
	for _, g := range globs {
		if ok, _ := doublestar.Match(g, name); ok {
			return true
		}
		if ok, _ := doublestar.Match(g, rel); ok {
			return true
		}
	}
	return false
}

// writeLSTree prints the children of n, directories first, each level
// indented two spaces.
func writeLSTree(b *strings.Builder, n *lsNode, depth int) {
	kids := append([]*lsNode(nil), n.children...)
	sort.SliceStable(kids, func(i, j int) bool {
		di, dj := kids[i].mode.IsDir(), kids[j].mode.IsDir()
		if di != dj {
			return di
		}
		return kids[i].name < kids[j].name
	})
	pad := strings.Repeat("  ", depth)
	for _, k := range kids {
		switch {
		case k.mode.IsDir():
			note := ""
			if !k.expanded {
				note = " (not listed)"
			} else if len(k.children) == 0 && k.pruned == 0 {
				note = " (empty)"
			}
			fmt.Fprintf(b, "%s- %s/%s\n", pad, k.name, note)
			writeLSTree(b, k, depth+1)
		case k.mode&fs.ModeSymlink != 0:
			fmt.Fprintf(b, "%s- %s -> %s (symlink)\n", pad, k.name, k.target)
		case k.mode.IsRegular():
			fmt.Fprintf(b, "%s- %s (%s)\n", pad, k.name, byteSize(k.size))
		default:
			fmt.Fprintf(b, "%s- %s (%s)\n", pad, k.name, k.mode.Type())
		}
	}
	if n.pruned > 0 && depth == 1 {
		fmt.Fprintf(b, "%s(%s ignored by .gitignore, ignore patterns or deny rules not shown)\n", pad, plural(n.pruned, "entry", "entries"))
	}
}

// byteSize renders a size for people: bytes below 1 KiB, else one decimal
// in KiB, MiB or GiB.
func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return plural(int(n), "byte", "bytes")
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
