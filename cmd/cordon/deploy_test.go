//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/internal/config"
	"github.com/cordonhq/cordon/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// userConfig writes doc as the user's config file of a fresh home and
// returns the sources that read it.
func userConfig(t *testing.T, doc string) config.Sources {
	t.Helper()
	base := t.TempDir()
	home, ws := filepath.Join(base, "home"), filepath.Join(base, "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".config", "cordon"), 0o755))
	require.NoError(t, os.MkdirAll(ws, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".config", "cordon", "config.toml"), []byte(doc), 0o644))
	t.Setenv("XDG_CONFIG_HOME", "")
	return config.Sources{Home: home, Workspace: config.Value[string]{V: ws, Origin: config.FlagOrigin("--workspace")}}
}

func TestDeploymentWiring(t *testing.T) {
	src := userConfig(t, `extra_write_allow = ["~/.cache/go-build", "/opt/x/../y"]
extra_read_deny = ["~/secrets"]
protected_paths = ["deploy/keys/"]
env_passthrough = ["GOPATH"]
dangerous_commands = ["kubectl delete # deletes cluster resources"]
approval = "always"
[bash]
timeout = "90s"
max_output_chars = 500
[http]
addr = "127.0.0.1:9"
allowed_origins = ["http://localhost:3000/"]
`)
	src.StateDir = config.Value[string]{V: filepath.Join(src.Home, "state"), Origin: config.Origin{Source: config.SourceDefault}}
	d, err := deploy(src)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(src.Home, ".cache/go-build"), "/opt/y"}, d.settings.ExtraWriteAllow)
	assert.Equal(t, []string{filepath.Join(src.Home, "secrets")}, d.settings.ExtraReadDeny)
	assert.Equal(t, []string{"deploy/keys"}, d.settings.ProtectedNames)
	assert.Equal(t, []string{"GOPATH"}, d.passthrough)
	assert.Equal(t, 90*time.Second, d.bashTimeout)
	assert.Equal(t, 500, d.maxOutput)
	assert.Equal(t, "127.0.0.1:9", d.httpAddr)
	assert.Equal(t, []string{"http://localhost:3000"}, d.allowedOrigins)
	assert.Equal(t, approval.Always, d.gate.Policy)
	dec := approval.Gate{Policy: approval.AskDangerous, Rules: d.gate.Rules}.Decide(approval.Call{Tool: "bash", Command: "kubectl delete pod web"})
	assert.Equal(t, approval.Ask, dec.Action, dec.Reason)
	dec = approval.Gate{Policy: approval.AskDangerous, Rules: d.gate.Rules}.Decide(approval.Call{Tool: "bash", Command: "rm -rf x"})
	assert.Equal(t, approval.Ask, dec.Action, "the defaults stay: %s", dec.Reason)
}

// TestConfigMatchesTools: the config's keys give the bash tool's defaults
// and maximum timeout (both from internal/defaults), checked here, where
// the config's values reach the tools.
func TestConfigMatchesTools(t *testing.T) {
	assert.Equal(t, tools.DefaultBashTimeout, config.BashTimeout.Default())
	assert.Equal(t, tools.DefaultMaxOutput, config.MaxOutputChars.Default())
	_, err := deploy(userConfig(t, "bash.timeout = \""+tools.MaxBashTimeout.String()+"\"\n"))
	assert.NoError(t, err, "the tools' maximum is accepted")
	_, err = deploy(userConfig(t, "bash.timeout = \""+(tools.MaxBashTimeout+time.Millisecond).String()+"\"\n"))
	assert.ErrorContains(t, err, "is longer than the maximum "+tools.MaxBashTimeout.String())
}
