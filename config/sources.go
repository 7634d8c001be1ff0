package config

// SettingSources lists the valid setting sources (--setting-sources).
func SettingSources() []string { return []string{SourceUser, SourceProject, SourceLocal} }
