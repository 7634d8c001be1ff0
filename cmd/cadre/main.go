// Command cadre runs LLM agents that delegate work to sub-agents. See
// `cadre --help`.
package main

import (
	"os"

	"github.com/cadre-dev/cadre/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
