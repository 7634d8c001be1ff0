// Command cadre-remote is cadre's companion binary for remote agents on
// Temporal: `cadre-remote worker` runs agents for a task queue, and
// `cadre-remote bridge` hosts the Temporal client of a launcher. It is a
// binary of its own so that the cadre binary never links the Temporal
// SDK; `cadre worker` runs it.
package main

import (
	"os"

	"github.com/cadre-dev/cadre/internal/remote/remotecmd"
)

func main() {
	os.Exit(remotecmd.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
