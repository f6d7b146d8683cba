package main

import (
	"testing"

	"github.com/cordonhq/cordon/internal/config"
	"github.com/cordonhq/cordon/mcpserver"
	"github.com/cordonhq/cordon/tools"
	"github.com/stretchr/testify/assert"
)

// TestConfigProcessDefaultsMatchTools: the config's keys for background
// processes give the defaults the tools apply when the config says
// nothing (both take them from internal/defaults).
func TestConfigProcessDefaultsMatchTools(t *testing.T) {
	assert.Equal(t, tools.DefaultProcessesMax, config.ProcessesMax.Default())
	assert.Equal(t, tools.DefaultProcessBufferChars, config.ProcessesMaxBufferChars.Default())
}

// TestConfigApprovalTimeoutMatchesServer: approval_timeout's default is
// the server's own, for a server built without the config (tests,
// embedders); both take it from internal/defaults.
func TestConfigApprovalTimeoutMatchesServer(t *testing.T) {
	assert.Equal(t, mcpserver.DefaultApprovalTimeout, config.ApprovalTimeout.Default())
}
