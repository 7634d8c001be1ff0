package prompts

import "fmt"

// The notes the Bash sandbox adds to a command's result when the output
// shows the sandbox refused something (internal/sandbox.Explain), so the
// model knows why and does not guess (S-10.5).

// SandboxMaskedWrite: a write to a masked path (a deny rule protects it).
func SandboxMaskedWrite(path string) string {
	return fmt.Sprintf("Sandbox: %s is masked (a deny rule protects it), so it cannot be changed.", path)
}

// SandboxReadOnlyPath: a write to a path an Edit deny rule keeps read-only.
func SandboxReadOnlyPath(path string) string {
	return fmt.Sprintf("Sandbox: %s is read-only here (an Edit deny rule protects it).", path)
}

// SandboxProtectedPath: a write to a file cadre (or git) trusts later —
// git's configuration and hooks, the project's settings and MCP servers.
func SandboxProtectedPath(path string) string {
	return fmt.Sprintf("Sandbox: %s is read-only here: git and cadre trust it later (git configuration and hooks, project settings, MCP servers), so no sandboxed command may change it. Ask the user to change it outside the sandbox if it must change.", path)
}

// SandboxCreatedProtected: a sandboxed command created a file that git or
// cadre would trust (moved to movedTo, or not movable: failure).
func SandboxCreatedProtected(path, movedTo, failure string) string {
	if movedTo == "" {
		return fmt.Sprintf("Sandbox: the command created %s, which git and cadre trust later; it could not be moved aside (%s): tell the user.", path, failure)
	}
	return fmt.Sprintf("Sandbox: the command created %s, which git and cadre trust later (git configuration and hooks, project settings, MCP servers); it was moved to %s and is not used. Ask the user to create it outside the sandbox if it is needed.", path, movedTo)
}

// SandboxWriteRefused: a write outside the writable places; path may be
// "" when the output names none. writable lists the places.
func SandboxWriteRefused(path, writable string) string {
	if path == "" {
		return fmt.Sprintf("Sandbox: a write was refused; commands may write only in %s.", writable)
	}
	return fmt.Sprintf("Sandbox: the write to %s was refused; commands may write only in %s.", path, writable)
}

// SandboxMaskedRead: a read of a masked path.
func SandboxMaskedRead(path string) string {
	return fmt.Sprintf("Sandbox: %s is masked because a deny rule protects it; it cannot be read from Bash.", path)
}

// SandboxPrivateTmp: a file under /tmp that an earlier command left in its
// own private /tmp.
func SandboxPrivateTmp(path string) string {
	return fmt.Sprintf("Sandbox: %s is not there because /tmp is private to each command; use a working directory to keep files.", path)
}

// SandboxNetworkOff: a connection refused with the network cut; what is
// "network access" or "the connection to HOST".
func SandboxNetworkOff(what string) string {
	return fmt.Sprintf("Sandbox: network access is off for Bash commands, so %s was refused; the settings can allow the network.", what)
}
