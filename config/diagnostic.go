package config

import "fmt"

// Severity grades a Diagnostic.
type Severity string

// Diagnostic severities. An error means something was not loaded (an
// agent definition); a warning means it loaded, perhaps without some
// value.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Topic says what a Diagnostic is about.
type Topic string

// Diagnostic topics.
const (
	// TopicSettings: a settings file.
	TopicSettings Topic = "settings"
	// TopicAgents: an agent definition file (agentdef diagnostics; the
	// cadre command shows their warnings only with --verbose).
	TopicAgents Topic = "agents"
	// TopicPermissions: the permission rules as a whole (a rule that can
	// never match, for example).
	TopicPermissions Topic = "permissions"
	// TopicTrust: a setting of an untrusted workspace that was ignored.
	TopicTrust Topic = "trust"
)

// Diagnostic is a problem found while loading that did not stop it.
type Diagnostic struct {
	// File is the file it is about; "" when it is about no one file.
	File string
	// Line and Column are 1-based; 0 when unknown.
	Line, Column int
	Severity     Severity
	Topic        Topic
	Message      string
}

// String formats the diagnostic as "file:line:column: severity: message",
// leaving out what is unknown.
func (d Diagnostic) String() string {
	switch {
	case d.File == "":
		return fmt.Sprintf("%s: %s", d.Severity, d.Message)
	case d.Line > 0 && d.Column > 0:
		return fmt.Sprintf("%s:%d:%d: %s: %s", d.File, d.Line, d.Column, d.Severity, d.Message)
	case d.Line > 0:
		return fmt.Sprintf("%s:%d: %s: %s", d.File, d.Line, d.Severity, d.Message)
	}
	return fmt.Sprintf("%s: %s: %s", d.File, d.Severity, d.Message)
}
