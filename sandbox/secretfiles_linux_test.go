package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/secrets"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecretFilesMaskedOrDenied: a secret's file (a tool's credential
// file, in the read-deny list as the callers put it) is, inside the real
// sandbox under network restricted, a copy with the sentinel in place of
// the value under bwrap — cat shows the sentinel, grep -r of its whole
// directory and of the egress directory bound inside finds no real value,
// and a change the host makes shows at the next start — and unreadable
// under Landlock; the real bytes never reach the command's output.
func TestSecretFilesMaskedOrDenied(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Provider) {
		f := newFixture(t, prov)
		dir := filepath.Join(f.home, ".config", "tool")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		file := filepath.Join(dir, "hosts.yml")
		require.NoError(t, os.WriteFile(file, []byte("github.com:\n  oauth_token: "+realToken+"\n  user: octo\n"), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yml"), []byte("editor: vim\n"), 0o644))
		// A file named through a symlink, as a dotfiles checkout makes it.
		npmrc := filepath.Join(f.home, ".npmrc")
		require.NoError(t, os.MkdirAll(filepath.Join(f.home, "dotfiles"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(f.home, "dotfiles", "npmrc"), []byte("//registry.npmjs.org/:_authToken="+realToken+"\n"), 0o600))
		require.NoError(t, os.Symlink("dotfiles/npmrc", npmrc))
		v, err := secrets.New([]secrets.Secret{{Name: "gh", Value: []byte(realToken), Hosts: []string{"api.github.com"},
			Env: "GH_TOKEN", Files: []string{file, npmrc}}})
		require.NoError(t, err)
		sentinel := v.Sentinel("gh")
		svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Network: NetworkRestricted, Workspace: f.ws, Home: f.home,
			StateDir: f.state, ConfigDir: filepath.Join(f.home, ".config", "cordon"), ExtraReadDeny: []string{file, npmrc}}}
		p, err := svc.Resolve(Request{TmpDir: f.tmp, SessionID: "test"})
		require.NoError(t, err)
		run := func() string {
			t.Helper()
			script := `cat "$1"; echo "[cat $?]"
cat ~/.npmrc; echo "[npmrc $?]"
grep -r -F -e "$2" "$(dirname "$1")" ~/dotfiles /tmp/.cordon-egress "$PWD" 2>&1; echo "[grep $?]"
cat "$(dirname "$1")/config.yml"`
			var out bytes.Buffer
			ex := &Executor{Provider: &LocalProvider{Forced: f.prov.Name()}, Requirement: Required}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			_, err := ex.Run(ctx, p, RunSpec{
				// The command is told the value's first half and searches
				// for it: the test's own argv must not hold the whole.
				Argv: []string{"bash", "-c", script, "sh", file, realToken[:len(realToken)/2]}, Dir: p.WorkspaceRoot,
				Env:    append(envWithout("HOME"), "HOME="+f.home),
				Stdout: &out, Stderr: &out, OwnGroup: true,
				Egress: EgressHooks{Secrets: v}})
			require.NoError(t, err, out.String())
			o := out.String()
			assert.NotContains(t, o, realToken[:len(realToken)/2], "no part of the value reached the command")
			assert.Contains(t, o, "editor: vim", "the file's siblings stay readable")
			return o
		}
		o := run()
		switch prov.Name() {
		case "bwrap":
			assert.Contains(t, o, "  oauth_token: "+sentinel+"\n  user: octo\n[cat 0]", o)
			assert.Contains(t, o, "//registry.npmjs.org/:_authToken="+sentinel+"\n[npmrc 0]", o)
			assert.Contains(t, o, "[grep 1]", "grep -r found nothing: %s", o)
			// The host changes the file: the next start masks it anew.
			require.NoError(t, os.WriteFile(file, []byte("token: "+realToken+"\nrefreshed: yes\n"), 0o600))
			o = run()
			assert.Contains(t, o, "token: "+sentinel+"\nrefreshed: yes\n[cat 0]", o)
		default:
			assert.Contains(t, o, "[cat 1]", "the file is denied: %s", o)
			assert.Contains(t, o, "[npmrc 1]", "the file is denied: %s", o)
			assert.NotContains(t, o, sentinel, "no masked copy under %s", prov.Name())
		}
		host, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Contains(t, string(host), realToken, "the host's file is untouched")
	})
}
