package tools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/internal/secrets"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecretFilesNeverRead: a secret's files — one in the home, one in the
// workspace, as a project's .npmrc — are refused by the FS fence (read_file,
// grep by path) and skipped by a search of the whole workspace, and a
// confined bash cat of them never prints the value: the toolbox puts them
// in the read-deny list from the secrets alone, with nothing in
// extra_read_deny.
func TestSecretFilesNeverRead(t *testing.T) {
	const value = "npm_REALVALUE_5d1c0b7e9a"
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	homeFile := filepath.Join(w.home, ".npmrc")
	wsFile := filepath.Join(w.ws, ".npmrc")
	for _, f := range []string{homeFile, wsFile} {
		require.NoError(t, os.WriteFile(f, []byte("//registry.npmjs.org/:_authToken="+value+"\n"), 0o600))
	}
	w.file(t, "ok.txt", "registry notes\n")
	tb := tools.New(tools.Config{
		Settings: sandbox.Settings{Mode: sandbox.WorkspaceWrite, Workspace: w.ws, Home: w.home, StateDir: w.state, ConfigDir: w.config},
		Executor: &sandbox.Executor{Backends: &sandbox.Backends{}, Requirement: sandbox.Required},
		Gate:     approval.Gate{Policy: approval.OnRequest},
		Logger:   zerolog.Nop(),
		Secrets: []secrets.Secret{{Name: "npm", Value: []byte(value), Hosts: []string{"registry.npmjs.org"},
			Env: "NPM_TOKEN", Files: []string{homeFile, wsFile}}},
	})
	for _, p := range []string{homeFile, wsFile, ".npmrc"} {
		res, terr := tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: p})
		if res != nil {
			assert.NotContains(t, res.Text, value, p)
		}
		requireFileDenied(t, terr, sandbox.WorkspaceWrite)
		_, terr = tb.Grep(bg, w.call, tools.GrepInput{Pattern: "authToken", Path: p})
		requireFileDenied(t, terr, sandbox.WorkspaceWrite)
	}
	res, terr := tb.Grep(bg, w.call, tools.GrepInput{Pattern: "authToken|registry"})
	require.Nil(t, terr)
	assert.Contains(t, res.Text, "ok.txt")
	assert.NotContains(t, res.Text, value)
	assert.NotContains(t, res.Text, ".npmrc")

	home := shellQuote(w.home)
	res, terr = tb.Bash(bg, w.call, tools.BashInput{Command: `cat ` + home + `/.npmrc; cat .npmrc; echo "[cat]"; grep -r authToken . ` + home + `; echo "[grep $?]"`})
	if terr != nil {
		// Landlock cannot refuse a read in the workspace: no sandbox at all.
		require.Equal(t, tools.CodeUnavailable, terr.Code, terr.Message)
		require.Contains(t, terr.Message, "lies in a writable root")
		return
	}
	out := res.Text
	assert.NotContains(t, out, value, out)
	assert.Contains(t, out, "[cat]", out)
	assert.NotContains(t, out, "_authToken=", "neither cat nor grep -r read the file: %s", out)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
