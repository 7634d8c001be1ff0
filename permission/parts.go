package permission

// The parts of a Checker. Each part is a view of the Checker with one
// job, so that no type holds every method of the checker:
//
//   - Checker (checker.go, subject.go, masks.go, webfetch.go): the
//     configuration, the mode, rule matching per tool kind and the path
//     and working-directory checks;
//   - bashCheck (bashcheck.go): the analysis of a Bash command — its
//     deny, ask and allow rules, its paths and redirections;
//   - contentCheck (exposure.go): the content rules a word may match and
//     what a Bash command may expose that a Read or Edit rule protects
//     (one script's search is an exposureCheck);
//   - hiddenCheck (hidden.go): what a command runs that a Bash rule
//     names but its words hide (interpreters, script files).

// bashCheck analyses Bash commands for a Checker.
type bashCheck struct{ *Checker }

// contentCheck matches words against content rules and finds what a
// Bash command may read or write past them.
type contentCheck struct{ *Checker }

// hiddenCheck finds the commands a script runs that a rule names.
type hiddenCheck struct{ *Checker }

func bashOf(c *Checker) bashCheck       { return bashCheck{c} }
func contentOf(c *Checker) contentCheck { return contentCheck{c} }
func hiddenOf(c *Checker) hiddenCheck   { return hiddenCheck{c} }
