//go:build !linux

package permission

// realPath has no shortcut here: evalExisting resolves p itself.
func realPath(string) (string, bool) { return "", false }
