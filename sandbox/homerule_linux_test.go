//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cordonhq/cordon/internal/pathx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHomeRuleRefusesARootHoldingHome: a confined policy whose writable
// roots hold the home directory (the home, "/", a directory above it, by
// any name) is refused on every backend with SANDBOX_UNAVAILABLE naming
// the root and the fix, and the command writes nothing; a directory
// inside the home works.
func TestHomeRuleRefusesARootHoldingHome(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		// A home reached through a symlink, as on systems where /home
		// is one: both names count.
		realHome := filepath.Join(f.base, "real", "me")
		require.NoError(t, os.MkdirAll(filepath.Join(realHome, "proj"), 0o755))
		linkedHome := filepath.Join(f.base, "users")
		require.NoError(t, os.Symlink(filepath.Join("real", "me"), linkedHome))
		cases := []struct {
			name             string
			home, workspace  string
			extra            []string
			own              string
			wantRoot, wantIn string
		}{
			{name: "workspace is the home", home: f.home, workspace: f.home, wantRoot: f.home, wantIn: "the workspace"},
			{name: "workspace above the home", home: f.home, workspace: f.base, wantRoot: f.base, wantIn: "the workspace"},
			{name: "extra_write_allow is the home", home: f.home, workspace: f.ws, extra: []string{f.home}, wantRoot: f.home, wantIn: "extra_write_allow"},
			{name: "extra_write_allow is /", home: f.home, workspace: f.ws, extra: []string{"/"}, wantRoot: "/", wantIn: "extra_write_allow"},
			{name: "class directory is the home", home: f.home, workspace: f.ws, own: f.home, wantRoot: f.home, wantIn: "class directory"},
			{name: "home through a symlink", home: linkedHome, workspace: realHome, wantRoot: pathx.CanonicalOrClean(realHome), wantIn: "the workspace"},
			{name: "above a symlinked home", home: linkedHome, workspace: filepath.Join(f.base, "real"), wantRoot: pathx.CanonicalOrClean(filepath.Join(f.base, "real")), wantIn: "the workspace"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: c.workspace, Home: c.home,
					ExtraWriteAllow: c.extra, OwnDir: c.own, StateDir: f.state}}
				p, err := svc.Resolve(Request{TmpDir: f.tmp})
				require.NoError(t, err, "resolving still works: the file tools read")
				planted := filepath.Join(pathx.CanonicalOrClean(c.home), ".bashrc")
				os.Remove(planted)
				ex := &Executor{Backends: &Backends{Forced: prov.Name()}, Requirement: Required}
				var out bytes.Buffer
				_, err = ex.Run(context.Background(), p, RunSpec{
					Argv: []string{"/bin/sh", "-c", `echo pwned >> "$1"`, "sh", planted}, Dir: p.WorkspaceRoot,
					Stdout: &out, Stderr: &out,
				})
				var ue *UnavailableError
				require.ErrorAs(t, err, &ue, "output: %s", out.String())
				assert.Contains(t, ue.Reason, "writable root "+c.wantRoot+" (")
				assert.Contains(t, ue.Reason, c.wantIn)
				assert.Contains(t, ue.Reason, "project directory", "the message names the fix")
				assert.NoFileExists(t, planted, "the command ran")
				require.ErrorIs(t, err, p.Refusal(), "the error is the policy's refusal")
			})
		}
		t.Run("a directory inside the home works", func(t *testing.T) {
			for _, home := range []string{f.home, linkedHome} {
				ws := filepath.Join(pathx.CanonicalOrClean(home), "proj")
				require.NoError(t, os.MkdirAll(ws, 0o755))
				svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: ws, Home: home, StateDir: f.state,
					ExtraWriteAllow: []string{filepath.Join(home, ".cache")}}}
				require.NoError(t, os.MkdirAll(filepath.Join(pathx.CanonicalOrClean(home), ".cache"), 0o755))
				p, err := svc.Resolve(Request{TmpDir: f.tmp})
				require.NoError(t, err)
				require.NoError(t, p.Refusal())
				out, code := f.sh(p, `echo ok > made.txt && cat made.txt`)
				assert.Equal(t, 0, code, out)
				assert.FileExists(t, filepath.Join(ws, "made.txt"))
			}
		})
		t.Run("read-only at the home works", func(t *testing.T) {
			out, code := f.sh(f.policyAt(f.home, ReadOnly), `echo ok`)
			assert.Equal(t, 0, code, out)
		})
	})
}
