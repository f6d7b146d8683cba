// Package defaults declares, once, the defaults and bounds of the settings
// that both a config key (internal/config) and the package that applies
// it (tools, mcpserver) hold: a server built without the config (tests,
// embedders) applies what a config that says nothing gives.
package defaults

import "time"

// The bash tool's timeout, its upper bound, and its output cap.
const (
	BashTimeout    = 120 * time.Second
	MaxBashTimeout = 600 * time.Second
	MaxOutputChars = 30000
)

// How many background processes a session may keep, and how much of each
// one's unread output is kept.
const (
	ProcessesMax       = 16
	ProcessBufferChars = 1_000_000
)

// ApprovalTimeout denies a question nobody answers.
const ApprovalTimeout = 5 * time.Minute
