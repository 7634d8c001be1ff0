package engine

import "github.com/cadre-dev/cadre/permission"

// AllowAll is the Permissions of an embedder that wants every tool call of
// every agent to run without a check but deny rules: bypassPermissions
// mode and no rules (append deny rules to keep some calls out). A nil
// Config.Permissions is not this: it is the default mode with nobody to
// ask, so a run that is given no permissions cannot write or run commands.
func AllowAll() *Permissions {
	return &Permissions{Mode: permission.ModeBypassPermissions}
}

// defaultPermissions is what a nil Config.Permissions means: default mode,
// no rules, no prompter — read-only calls inside the working directories
// run, and what would be asked is denied with the reason (S-10.1, issue 9).
func defaultPermissions() *Permissions {
	return &Permissions{Mode: permission.ModeDefault}
}
