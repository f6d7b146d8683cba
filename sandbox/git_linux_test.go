package sandbox

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func gitHost(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

const gitCommit = `git -c user.name=agent -c user.email=agent@example.com add -A && git -c user.name=agent -c user.email=agent@example.com commit -qm "from the sandbox" && git log --oneline | head -1`

// TestGitWorksInTheWorkspace: .git stays writable (a read-only .git breaks
// git commit), while its hooks and config stay protected.
func TestGitWorksInTheWorkspace(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed for this test")
	}
	for _, prov := range []Backend{newBwrap(), newLandlock()} {
		t.Run(prov.Name(), func(t *testing.T) {
			f := newFixture(t, prov)
			gitHost(t, f.ws, "init", "-q")
			gitHost(t, f.ws, "add", "-A")
			gitHost(t, f.ws, "commit", "-qm", "first")
			require.NoError(t, os.WriteFile(filepath.Join(f.ws, "new.go"), []byte("package x\n"), 0o644))
			out, code := f.sh(f.policy(WorkspaceWrite, NetworkAllow), gitCommit)
			assert.Equal(t, 0, code, out)
			assert.Contains(t, out, "from the sandbox")
			if prov.Name() == "bwrap" {
				hooksBefore := testenv.Snapshot(t, filepath.Join(f.ws, ".git", "hooks"), filepath.Join(f.ws, ".git", "config"))
				out, code = f.sh(f.policy(WorkspaceWrite, NetworkAllow), `printf '#!/bin/sh\nevil\n' > .git/hooks/pre-commit; git config core.hooksPath /tmp/evil`)
				assert.NotEqual(t, 0, code, out)
				assert.Equal(t, hooksBefore, testenv.Snapshot(t, filepath.Join(f.ws, ".git", "hooks"), filepath.Join(f.ws, ".git", "config")))
			}

			// A linked worktree: its gitdir and the common dir outside the
			// workspace are writable, so commits work there too.
			wt := filepath.Join(f.base, "wt")
			gitHost(t, f.ws, "worktree", "add", "-q", "-b", "feature", wt)
			require.NoError(t, os.WriteFile(filepath.Join(wt, "feature.go"), []byte("package x\n"), 0o644))
			svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: wt, Home: f.home, StateDir: f.state,
				ConfigDir: filepath.Join(f.home, ".config", "cordon")}}
			pol, err := svc.Resolve(Request{TmpDir: f.tmp})
			require.NoError(t, err)
			out, code = f.sh(pol, gitCommit)
			assert.Equal(t, 0, code, out)
			assert.Contains(t, out, "from the sandbox")
		})
	}
}

// TestSelfProtectionWhenWorkspaceHoldsTheControlPlane: with cordon's
// config directory inside the workspace (XDG_CONFIG_HOME in a project; a
// workspace at the home is refused outright, homerule.go), cordon's
// config stays unwritable and its state unreadable.
func TestSelfProtectionWhenWorkspaceHoldsTheControlPlane(t *testing.T) {
	f := newFixture(t, newBwrap())
	cfgDir := filepath.Join(f.ws, ".config", "cordon")
	require.NoError(t, os.MkdirAll(cfgDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte("mode = \"read-only\"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.state, "http-token"), []byte("token-canary\n"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(f.ws, ".aws"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.ws, ".aws", "credentials"), []byte("aws-canary\n"), 0o600))
	svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: f.ws, Home: f.home, StateDir: f.state, ConfigDir: cfgDir,
		ExtraReadDeny: []string{filepath.Join(f.ws, ".aws")}}}
	p, err := svc.Resolve(Request{TmpDir: f.tmp})
	require.NoError(t, err)
	before := testenv.Snapshot(t, f.ws)
	cases := map[string]string{
		"write the config":   `echo 'mode = "danger-full-access"' > .config/cordon/config.toml`,
		"replace the config": `rm -rf .config/cordon`,
		"read the token":     `cat "$1"/http-token`,
		"read a credential":  `cat .ssh/id_canary`,
		"list ~/.aws":        `ls -A .aws | grep credentials`,
		"read ~/.aws":        `cat .aws/credentials`,
	}
	for name, script := range cases {
		out, code := f.sh(p, script, f.state)
		assert.NotEqual(t, 0, code, "%s: %s", name, out)
		for _, canary := range []string{"token-canary", "aws-canary", "SECRET-CANARY"} {
			assert.NotContains(t, out, canary, name)
		}
	}
	assert.Equal(t, before, testenv.Snapshot(t, f.ws), "the workspace changed")
	out, code := f.sh(p, `echo ok > notes.txt && cat notes.txt`)
	assert.Equal(t, 0, code, out)
}

// TestDockerSocketCovered: a Docker daemon's socket is covered by
// /dev/null, so no confined command can ask root on the host for help.
func TestDockerSocketCovered(t *testing.T) {
	const sock = "/run/docker.sock"
	// A socket that is there already (a daemon, or the escape suite's
	// stand-in, run in parallel by go test ./...) serves the check as well:
	// it is only looked at, never written.
	if fi, err := os.Lstat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
		checkDockerCovered(t)
		return
	} else if err == nil {
		t.Fatalf("%s exists and is not a socket: the test will not touch it", sock)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatalf("cannot create a stand-in Docker socket (needs root): %v", err)
	}
	defer os.Remove(sock)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.0 200 OK\r\n\r\ndocker-answered"))
			c.Close()
		}
	}()
	checkDockerCovered(t)
}

func checkDockerCovered(t *testing.T) {
	f := newFixture(t, newBwrap())
	out, _ := f.sh(f.policy(WorkspaceWrite, NetworkAllow), `test -S /run/docker.sock && echo IS-SOCKET; test -S /var/run/docker.sock && echo VAR-IS-SOCKET; true`)
	assert.NotContains(t, out, "IS-SOCKET", "the Docker socket must be covered")
}
