package winacl

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfine: the runner's command line. What sandbox makes of
// the rest is sandbox's TestWindowsACLConfine.
func TestConfine(t *testing.T) {
	p := testPolicy(t, workspaceWrite, func(ws string) { testMkdir(t, ws, ".git", "hooks") })
	p.NetworkDeny = true
	p.ReadDeny = []string{"/home/me/.ssh"}
	argv := []string{"bash", "-c", "echo hi > out.txt"}

	c, err := Confine(p.Policy, decide(nil), argv, nil)
	require.NoError(t, err)
	want := []string{"--windows-acl", "--token", "restricted"}
	for _, sid := range c.plan.TokenSIDs {
		want = append(want, "--sid", sid)
	}
	want = append(append(want, "--"), argv...)
	assert.Equal(t, want, c.Args, "[runner] [profile args...] [--] [original argv...]")

	parsed, err := parseRunnerArgs(c.Args)
	require.NoError(t, err)
	assert.Equal(t, argv, parsed.argv)
	assert.Equal(t, c.plan.TokenSIDs, parsed.sids)

	t.Run("empty command", func(t *testing.T) {
		_, err := Confine(p.Policy, decide(nil), nil, nil)
		assert.Error(t, err)
	})
}

func TestEnv(t *testing.T) {
	host := []string{
		`Path=C:\Windows\system32;C:\Program Files\Git\cmd`,
		`SYSTEMROOT=C:\Windows`,
		`ComSpec=C:\Windows\system32\cmd.exe`,
		`OPENAI_API_KEY=sk-secret`,
		`USERPROFILE=C:\Users\me`,
		`=C:=C:\work`, // cmd's per-drive cwd entries
	}
	env := confinedEnv(host, `C:\state\tmp\abc`)
	assert.Contains(t, env, `PATH=C:\Windows\system32;C:\Program Files\Git\cmd`, "found whatever its case")
	assert.Contains(t, env, `SystemRoot=C:\Windows`)
	assert.Contains(t, env, `ComSpec=C:\Windows\system32\cmd.exe`)
	assert.Contains(t, env, `USERPROFILE=C:\Users\me`)
	assert.Contains(t, env, `TEMP=C:\state\tmp\abc`)
	assert.Contains(t, env, `TMP=C:\state\tmp\abc`)
	assert.Contains(t, env, `TMPDIR=C:\state\tmp\abc`)
	for _, kv := range env {
		assert.NotContains(t, kv, "sk-secret", "secrets stay out")
		assert.False(t, strings.HasPrefix(kv, "="))
	}
	assert.NotContains(t, strings.Join(confinedEnv(host, ""), "\n"), "TEMP=", "no session tmp, no redirection")
}
