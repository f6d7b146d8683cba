package main

import (
	"bytes"
	"github.com/stretchr/testify/require"
	"os"
	"os/user"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
)

func TestOneDashLongFlags(t *testing.T) {
	cases := []struct{ in, want string }{
		{"status -json", "status --json"},
		{"status -json=false -backend landlock", "status --json=false --backend landlock"},
		{"status --json -h", "status --json -h"},
		{"status -help", "status --help"},
		// A flag's value is left alone, even when it looks like a flag.
		{"serve -session -json", "serve --session -json"},
		{"serve --session -json -log-level debug", "serve --session -json --log-level debug"},
		// After a positional argument, flags may still follow...
		{"log ID -verify", "log ID --verify"},
		{"mode read-only -session ID", "mode read-only --session ID"},
		// ...except where that argument starts a command line of its own.
		{"exec -mode read-only ls -mode", "exec --mode read-only ls -mode"},
		{"exec -mode read-only -- grep -json", "exec --mode read-only -- grep -json"},
		{"profile -json bash -json", "profile --json bash -json"},
		// Unknown names, one-letter flags and other commands are not touched.
		{"status -frobnicate", "status -frobnicate"},
		{"exec -x -- true", "exec -x -- true"},
		{"frobnicate -json", "frobnicate -json"},
		{"-json status", "-json status"},
	}
	for _, c := range cases {
		got := oneDashLongFlags(newRoot(), strings.Fields(c.in))
		assert.Equal(t, c.want, strings.Join(got, " "), c.in)
	}
}

func TestJSONRequested(t *testing.T) {
	for args, want := range map[string]bool{
		"status --json":                 true,
		"status -json":                  true,
		"status --json=true":            true,
		"status --json=false":           false,
		"status --json --json=false":    false,
		"status --frobnicate --json":    true,
		"status":                        false,
		"status -- --json":              false,
		"status --jsonx":                false,
		"status --backend json":         false,
		"status --backend=json --json=": false,
	} {
		assert.Equal(t, want, jsonRequested(strings.Fields(args)), args)
	}
}

// TestCompletionValuesParse: every value the completion scripts offer is
// one the flag accepts.
func TestCompletionValuesParse(t *testing.T) {
	for _, v := range modeNames {
		_, err := sandbox.ParseMode(v)
		assert.NoError(t, err)
	}
	for _, v := range networkNames {
		_, err := sandbox.ParseNetwork(v)
		assert.NoError(t, err)
	}
	for _, v := range backendNames {
		assert.NoError(t, sandbox.ValidBackend(v))
	}
	for _, v := range presetNames {
		_, err := approval.ParsePreset(v)
		assert.NoError(t, err)
	}
	for _, v := range approvalNames {
		_, err := approval.ParsePolicy(v)
		assert.NoError(t, err)
	}
	for _, v := range logLevels {
		_, err := zerolog.ParseLevel(v)
		assert.NoError(t, err)
	}
}

// TestRootHelpListsEveryCommand: the root's help is written by hand; it
// must name every command there is.
func TestRootHelpListsEveryCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, exitOK, run([]string{"--help"}, nil, &out, &errOut))
	assert.Equal(t, usage, out.String())
	assert.Empty(t, errOut.String())
	root := newRoot()
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			line := "\n  cordon " + c.Name()
			assert.True(t, strings.Contains(usage, line+" ") || strings.Contains(usage, line+"\n"), c.Name())
		}
	}
}

// TestUserHomeWithoutHOME: a cordon started without HOME, or with a HOME
// that is not there, protects the account's home, never "/" or none.
func TestUserHomeWithoutHOME(t *testing.T) {
	u, err := user.Current()
	require.NoError(t, err)
	if fi, err := os.Stat(u.HomeDir); err != nil || !fi.IsDir() {
		t.Skipf("the user database names no existing home for %s", u.Username)
	}
	for _, home := range []string{"", "/nonexistent/cordon-home"} {
		t.Setenv("HOME", home)
		got, err := userHome()
		require.NoError(t, err)
		assert.Equal(t, u.HomeDir, got, "HOME=%q", home)
	}
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	got, err := userHome()
	require.NoError(t, err)
	assert.Equal(t, dir, got, "a HOME that is a directory is the home")
}
