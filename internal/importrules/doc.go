// Package importrules holds no code: its test holds the arrows of
// DESIGN.md. It reads `go list -json` for every package of the module and
// fails on an import that goes up a layer, on a package the layer table
// does not place, and on an import that only certain packages may make.
// When a new package is made, place it in the table in importrules_test.go
// (a row says what the layer holds and why it sits where it does).
//
// Its other test parses every non-test file of the module and fails on a
// type with more than 25 methods: such a type does several jobs, and is
// split into parts with one job each.
package importrules
