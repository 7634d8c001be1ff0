package config

import (
	"os"
	"path/filepath"
)

// Claude Code's settings files (issue 29) are read beside cadre's, with
// Claude Code's precedence — managed > CLI flags > project local > project
// > user — and at each level Claude Code's file first, so that cadre's
// file of the same level wins a clash (a warning names both files):
//
//	user     ~/.claude/settings.json          < $XDG_CONFIG_HOME/cadre/settings.json (or ~/.config/cadre/settings.json)
//	project  .claude/settings.json            < .cadre/settings.json
//	local    .claude/settings.local.json      < .cadre/settings.local.json
//	flags    --settings, then the other flags
//	managed  /etc/claude-code/managed-settings.json (+ managed-settings.d/)
//	         < /etc/cadre/managed-settings.json (+ managed-settings.d/)
//
// Workspace trust gates the project's .claude files exactly as its .cadre
// ones.

// Precedence levels of settings files, lowest first.
const (
	levelUser = iota + 1
	levelProject
	levelLocal
	levelFlag
	levelManaged
)

// UserConfigDir is the directory of cadre's user files (settings.json,
// the trust file): $XDG_CONFIG_HOME/cadre when configHome (the value of
// XDG_CONFIG_HOME) is an absolute path, unless only the old
// ~/.config/cadre exists, which then keeps working; else ~/.config/cadre.
func UserConfigDir(home, configHome string) string {
	old := filepath.Join(home, ".config", "cadre")
	if configHome == "" || !filepath.IsAbs(configHome) {
		return old
	}
	dir := filepath.Join(configHome, "cadre")
	if dir == old || isDir(dir) || !isDir(old) {
		return dir
	}
	return old
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
