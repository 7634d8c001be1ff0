package run

// Provenance says where what widens a session's permissions came from,
// and what a workspace asked for and did not get because it is not
// trusted (S-10.4). Package config fills it (Config.Provenance of package
// cadre); the init event carries it so a person or a program can see why
// a run may do what it does.
type Provenance struct {
	// ModeSource names where the main agent's permission mode came from:
	// a settings file, "--permission-mode", "--dangerously-skip-permissions",
	// or "" for the default.
	ModeSource string
	// Trusted reports whether the workspace's own files may widen what the
	// run does; TrustSource says why ("--trust-project", the trust file
	// `cadre trust` writes, or a settings file's trustedWorkspaces).
	Trusted     bool
	TrustSource string
	// Widenings are the settings in force that widen the run beyond the
	// default mode: allow rules, a mode above default, further directories,
	// each with the file or flag that set it.
	Widenings []Setting
	// Ignored are the widening settings of an untrusted workspace that were
	// not applied, each with its file.
	Ignored []Setting
}

// Setting is one setting and where it came from.
type Setting struct {
	// What names the setting: `permissions.allow "Bash"`, `env.ANTHROPIC_BASE_URL`,
	// `permissions.defaultMode bypassPermissions`.
	What string
	// Source is the file or flag that set it.
	Source string
}

// SandboxStatus is what the session's Bash sandbox does, as reported on
// the init event and by Runtime.SandboxStatus.
type SandboxStatus struct {
	// Enabled reports that Bash commands run confined (all of them, or
	// with BackgroundOnly those of background sub-agents).
	Enabled        bool
	BackgroundOnly bool
	// Network reports that confined commands may use the network.
	Network bool
	// Writable are the configured writable paths besides the working
	// directories.
	Writable []string
	// Unavailable, when the sandbox was asked for but bubblewrap cannot
	// run, says why and that commands run without it.
	Unavailable string
}
