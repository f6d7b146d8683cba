//go:build linux

package mcpserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBashDenialCases repeats the confinement suite's denials through the
// bash tool: each must answer with the marker and the hint, and leave the
// file system exactly as it was.
func TestBashDenialCases(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, ".git", "hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, ".git", "config"), []byte("[core]\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "mine.txt"), []byte("mine\n"), 0o644))
	require.NoError(t, os.Symlink(w.outside, filepath.Join(w.ws, "out")))
	o := w.outsideFile
	cases := []struct {
		mode, name, script string
	}{
		{"read-only", "create", "echo x > new.txt"},
		{"read-only", "append", "echo x >> mine.txt"},
		{"read-only", "truncate", ": > mine.txt"},
		{"read-only", "chmod", "chmod 777 mine.txt"},
		{"read-only", "rename", "mv mine.txt moved.txt"},
		{"read-only", "delete", "rm mine.txt"},
		{"read-only", "hard link", "ln mine.txt linked.txt"},
		{"read-only", "outside", "echo x >> " + o},
		{"workspace-write", "absolute outside", "echo x >> " + o},
		{"workspace-write", "dotdot", "echo x >> ../outside/file.txt"},
		{"workspace-write", "symlink", "echo x >> out/file.txt"},
		{"workspace-write", "proc self root", "echo x >> /proc/self/root" + o},
		{"workspace-write", "hard link out", "ln " + o + " hl && echo x >> hl"},
		{"workspace-write", "git hook", "printf '#!/bin/sh\\nevil' > .git/hooks/pre-commit"},
		{"workspace-write", "git config", "echo evil >> .git/config"},
		{"workspace-write", "cordon dir", "mkdir -p .cordon && echo x > .cordon/config.toml"},
		{"workspace-write", "bashrc", "echo evil > .bashrc"},
		{"workspace-write", "state dir", "echo x > " + filepath.Join(w.state, "forged.jsonl")},
	}
	sessions := map[string]*mcp.ClientSession{
		"read-only":       w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "read-only"),
		"workspace-write": w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "workspace-write"),
	}
	for _, c := range cases {
		t.Run(c.mode+"/"+c.name, func(t *testing.T) {
			before := snapshotTree(t, w.base)
			res := call(t, sessions[c.mode], "bash", map[string]any{"command": c.script})
			assert.True(t, res.IsError, text(res))
			assert.True(t, strings.HasPrefix(text(res), "[sandbox: file access denied under "+c.mode+" mode]"), text(res))
			assert.Contains(t, text(res), "call bash again with sandbox_permissions=")
			assert.Equal(t, true, structured(t, res)["denied"])
			assert.Equal(t, before, snapshotTree(t, w.base), "the file system changed")
		})
	}
}
