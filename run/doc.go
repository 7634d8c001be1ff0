// Package run is the public vocabulary of a cadre run: the events
// Runtime.Run streams (Event and its EventType), the Result a run ends
// with, and what they carry about sub-agents — their task info, spawn
// receipts, structured results, worktree outcomes, and the reasons an
// Agent call is refused. Package cadre, its engine, the command line and
// embedders all speak it; it holds data only and imports no engine code.
package run
