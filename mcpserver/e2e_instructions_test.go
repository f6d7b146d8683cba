//go:build linux

package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestInstructionsReachAClientThatHidesThem: Gemini CLI and Qwen Code do
// not show their model the instructions of initialize, so cordon gives
// them once, at the head of the first result they fit in; a client that shows them never gets them twice.
func TestInstructionsReachAClientThatHidesThem(t *testing.T) {
	const lead = "[cordon's instructions, which your client does not show you]\ncordon: sandboxed shell and file tools. Mode: read-only."
	for _, tc := range []struct {
		client string
		given  bool
	}{
		{"gemini-cli-mcp-client", true},
		{"qwen-cli-mcp-client-cordon", true},
		{"claude-code", false},
		{"opencode", false},
		{"some-new-client", false},
	} {
		t.Run(tc.client, func(t *testing.T) {
			w := newWorld(t)
			cs := w.stdio(t, clientOpts{version: "2025-11-25", name: tc.client}, "--mode", "read-only")
			first := text(call(t, cs, "bash", map[string]any{"command": "echo one"}))
			second := text(call(t, cs, "bash", map[string]any{"command": "echo two"}))
			if !tc.given {
				assert.NotContains(t, first, "cordon's instructions")
				assert.Contains(t, first, "one")
				return
			}
			assert.True(t, strings.HasPrefix(first, lead), "the first result leads with the instructions, in the session's mode: %q", first)
			assert.Contains(t, first, "sandbox_status")
			assert.Contains(t, first, "one")
			assert.NotContains(t, second, "cordon's instructions", "once per session")
		})
	}
}
