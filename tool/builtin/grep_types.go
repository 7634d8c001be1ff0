package builtin

import (
	"sort"
	"strings"
)

// grepTypes maps Grep's type names to file-name globs. The same table
// drives both search paths: ripgrep gets it through --type-add, so results
// do not depend on the rg version's own table. It is built per call, so
// there is no shared mutable state.
func grepTypes() map[string][]string {
	return map[string][]string{
		"c":          {"*.c", "*.h"},
		"cpp":        {"*.cpp", "*.cc", "*.cxx", "*.c++", "*.hpp", "*.hh", "*.hxx", "*.h++", "*.h", "*.inl"},
		"cs":         {"*.cs"},
		"css":        {"*.css", "*.scss", "*.sass", "*.less"},
		"go":         {"*.go"},
		"html":       {"*.html", "*.htm", "*.xhtml"},
		"java":       {"*.java"},
		"js":         {"*.js", "*.jsx", "*.mjs", "*.cjs"},
		"json":       {"*.json", "*.jsonl", "*.json5"},
		"kotlin":     {"*.kt", "*.kts"},
		"lua":        {"*.lua"},
		"make":       {"Makefile", "makefile", "GNUmakefile", "*.mk", "*.mak"},
		"md":         {"*.md", "*.markdown", "*.mdx"},
		"markdown":   {"*.md", "*.markdown", "*.mdx"},
		"php":        {"*.php"},
		"proto":      {"*.proto"},
		"py":         {"*.py", "*.pyi"},
		"python":     {"*.py", "*.pyi"},
		"rb":         {"*.rb", "*.rake", "Gemfile", "Rakefile"},
		"ruby":       {"*.rb", "*.rake", "Gemfile", "Rakefile"},
		"rs":         {"*.rs"},
		"rust":       {"*.rs"},
		"scala":      {"*.scala", "*.sc"},
		"sh":         {"*.sh", "*.bash", "*.zsh"},
		"sql":        {"*.sql"},
		"swift":      {"*.swift"},
		"toml":       {"*.toml"},
		"ts":         {"*.ts", "*.tsx", "*.mts", "*.cts"},
		"typescript": {"*.ts", "*.tsx", "*.mts", "*.cts"},
		"txt":        {"*.txt"},
		"xml":        {"*.xml", "*.xsd", "*.xsl"},
		"yaml":       {"*.yaml", "*.yml"},
	}
}

// typeNames lists the known type names, sorted, for error messages.
func typeNames() string {
	types := grepTypes()
	names := make([]string, 0, len(types))
	for n := range types {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
