package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/secrets"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// secretFilesWorld is a home with tools' credential files holding the
// value — gh's, in a directory the read-deny list hides, and npm's, named
// through a dotfiles symlink — and a secret made of them.
type secretFilesWorld struct {
	f           *fixture
	file, npmrc string
	v           *secrets.Vault
	extraDeny   []string // the human's extra_read_deny
	mode        Mode     // workspace-write unless set
}

func newSecretFilesWorld(t *testing.T, prov Backend, more ...string) *secretFilesWorld {
	f := newFixture(t, prov)
	w := &secretFilesWorld{f: f, file: filepath.Join(f.home, ".config", "gh", "hosts.yml"), npmrc: filepath.Join(f.home, ".npmrc")}
	require.NoError(t, os.MkdirAll(filepath.Dir(w.file), 0o755))
	require.NoError(t, os.WriteFile(w.file, []byte("github.com:\n  oauth_token: "+realToken+"\n  user: octo\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(w.file), "config.yml"), []byte("GH-CONFIG-CANARY\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(f.home, "dotfiles"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.home, "dotfiles", "vimrc"), []byte("editor: vim\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.home, "dotfiles", "npmrc"), []byte("//registry.npmjs.org/:_authToken="+realToken+"\n"), 0o600))
	require.NoError(t, os.Symlink("dotfiles/npmrc", w.npmrc))
	var err error
	w.v, err = secrets.New([]secrets.Secret{{Name: "gh", Value: []byte(realToken), Hosts: []string{"api.github.com"},
		Env: "GH_TOKEN", Files: append([]string{w.file, w.npmrc}, more...)}})
	require.NoError(t, err)
	return w
}

// run runs script under network restricted with the secrets; $1 is the
// credential file, $2 the first half of the value, which the script may
// search for (the test's own argv must not hold the whole).
func (w *secretFilesWorld) run(t *testing.T, script string) (string, error) {
	t.Helper()
	f := w.f
	mode := cmp.Or(w.mode, WorkspaceWrite)
	svc := PolicyService{Settings: Settings{Mode: mode, Network: NetworkRestricted, Workspace: f.ws, Home: f.home,
		StateDir: f.state, ConfigDir: filepath.Join(f.home, ".config", "cordon"), SecretFiles: w.v.Files(), ExtraReadDeny: w.extraDeny}}
	p, err := svc.Resolve(Request{TmpDir: f.tmp, SessionID: "test"})
	require.NoError(t, err)
	var out bytes.Buffer
	ex := &Executor{Backends: &Backends{Forced: f.prov.Name()}, Requirement: Required}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	_, err = ex.Run(ctx, p, RunSpec{
		Argv: []string{"bash", "-c", script, "sh", w.file, realToken[:len(realToken)/2]}, Dir: p.WorkspaceRoot,
		Env:    append(envWithout("HOME"), "HOME="+f.home),
		Stdout: &out, Stderr: &out, OwnGroup: true,
		Egress: EgressHooks{Secrets: w.v}})
	o := out.String()
	assert.NotContains(t, o, realToken[:len(realToken)/2], "no part of the value reached the command")
	return o, err
}

// TestSecretFilesMaskedOrDenied: a secret's file is, inside the real
// sandbox under network restricted, a copy with the sentinel in place of
// the value under bwrap — cat shows the sentinel, in a hidden directory
// (alone there) and through a symlink too;
// grep -r of its whole directory, the link's target directory and the
// egress directory bound inside finds no real value; a change the host
// makes shows at the next start — and unreadable under Landlock; the real
// bytes never reach the command.
func TestSecretFilesMaskedOrDenied(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		w := newSecretFilesWorld(t, prov)
		sentinel := w.v.Sentinel("gh")
		script := `cat "$1"; echo "[cat $?]"
cat ~/.npmrc; echo "[npmrc $?]"
grep -r -F -e "$2" "$(dirname "$1")" ~/dotfiles /tmp/.cordon-egress "$PWD" 2>&1; echo "[grep $?]"
cat "$(dirname "$1")/config.yml" ~/dotfiles/vimrc`
		o, err := w.run(t, script)
		require.NoError(t, err, o)
		assert.Contains(t, o, "editor: vim", "the link target's siblings stay readable")
		assert.NotContains(t, o, "GH-CONFIG-CANARY", "the hidden directory shows the masked file alone")
		switch prov.Name() {
		case "bwrap":
			assert.Contains(t, o, "  oauth_token: "+sentinel+"\n  user: octo\n[cat 0]", o)
			assert.Contains(t, o, "//registry.npmjs.org/:_authToken="+sentinel+"\n[npmrc 0]", o)
			assert.Contains(t, o, "[grep 1]", "grep -r found nothing: %s", o)
			// The host changes the file: the next start masks it anew.
			require.NoError(t, os.WriteFile(w.file, []byte("token: "+realToken+"\nrefreshed: yes\n"), 0o600))
			o, err = w.run(t, script)
			require.NoError(t, err, o)
			assert.Contains(t, o, "token: "+sentinel+"\nrefreshed: yes\n[cat 0]", o)
		default:
			assert.Contains(t, o, "[cat 1]", "the file is denied: %s", o)
			assert.Contains(t, o, "[npmrc 1]", "the file is denied: %s", o)
			assert.NotContains(t, o, sentinel, "no masked copy under %s", prov.Name())
		}
		host, err := os.ReadFile(w.file)
		require.NoError(t, err)
		assert.Contains(t, string(host), realToken, "the host's file is untouched")
	})
}

// TestSecretFilesInWorkspaceHiddenOrRefused: a secret's file in the
// workspace, which commands write — a project's .npmrc, and one a command
// replaced by a link to another credential (one the human keeps in
// extra_read_deny) — is hidden under bwrap, not masked (its masked copy
// would show that other credential whole); Landlock, which cannot refuse
// a read beneath a writable root, refuses the sandbox instead.
func TestSecretFilesInWorkspaceHiddenOrRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		wsNpmrc := filepath.Join(f.ws, ".npmrc")
		require.NoError(t, os.WriteFile(wsNpmrc, []byte("//project.example/:_authToken="+realToken+"\n"), 0o600))
		company := filepath.Join(f.home, "company", "deploy.key")
		require.NoError(t, os.MkdirAll(filepath.Dir(company), 0o755))
		require.NoError(t, os.WriteFile(company, []byte("COMPANY-KEY-CANARY\n"), 0o600))
		planted := filepath.Join(f.ws, "sub", ".npmrc")
		require.NoError(t, os.MkdirAll(filepath.Dir(planted), 0o755))
		require.NoError(t, os.Symlink(company, planted))
		w := &secretFilesWorld{f: f, file: wsNpmrc, extraDeny: []string{company}}
		var err error
		w.v, err = secrets.New([]secrets.Secret{{Name: "npm", Value: []byte(realToken), Hosts: []string{"registry.npmjs.org"},
			Env: "NPM_TOKEN", Files: []string{wsNpmrc, planted}}})
		require.NoError(t, err)
		// In read-only mode too: the link was planted by a command of
		// another mode, and the workspace is not writable now.
		for _, mode := range []Mode{WorkspaceWrite, ReadOnly} {
			w.mode = mode
			o, err := w.run(t, `cat .npmrc sub/.npmrc; echo "[cat]"; grep -r -e "$2" -e COMPANY . 2>&1; echo "[grep $?]"`)
			assert.NotContains(t, o, "COMPANY-KEY-CANARY", "%s: a planted link shows no other credential", mode)
			assert.NotContains(t, o, "_authToken=", "%s: the project's file is hidden, not masked", mode)
			if prov.Name() == "landlock" && mode == WorkspaceWrite {
				var ue *UnavailableError
				require.True(t, errors.As(err, &ue), "Landlock refuses the sandbox: %v %s", err, o)
				assert.Contains(t, ue.Reason, "lies in a writable root")
				continue
			}
			require.NoError(t, err, o)
			assert.Contains(t, o, "[cat]", o)
		}
	})
}

// TestSecretFileLedIntoAnotherCredential: a secret's file in a directory
// another session writes (its workspace), which a command there made a
// symlink or a hard link to another credential file that also holds the
// value, shows no copy of that file: the copy would show every other
// credential in it. A link below the home to a file the sandbox reads
// anyway still shows the masked copy, as a dotfiles link in the home does
// (TestSecretFilesMaskedOrDenied).
func TestSecretFileLedIntoAnotherCredential(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		creds := filepath.Join(f.home, ".git-credentials")
		require.NoError(t, os.WriteFile(creds, []byte("https://octo:"+realToken+"@github.com\nhttps://octo:OTHER-CRED-CANARY@gitlab.example\n"), 0o600))
		notes := filepath.Join(f.home, "notes", "npmrc")
		require.NoError(t, os.MkdirAll(filepath.Dir(notes), 0o755))
		require.NoError(t, os.WriteFile(notes, []byte("//registry.npmjs.org/:_authToken="+realToken+"\n"), 0o600))
		linked, hard, readable := filepath.Join(f.home, "projB", ".npmrc"), filepath.Join(f.home, "projC", ".npmrc"), filepath.Join(f.home, "projD", ".npmrc")
		for _, p := range []string{linked, hard, readable} {
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		}
		require.NoError(t, os.Symlink(creds, linked))
		require.NoError(t, os.Link(creds, hard))
		require.NoError(t, os.Symlink(notes, readable))
		w := &secretFilesWorld{f: f, file: linked}
		var err error
		w.v, err = secrets.New([]secrets.Secret{{Name: "npm", Value: []byte(realToken), Hosts: []string{"registry.npmjs.org"},
			Env: "NPM_TOKEN", Files: []string{linked, hard, readable}}})
		require.NoError(t, err)
		o, err := w.run(t, `for f in ~/projB/.npmrc ~/projC/.npmrc ~/projD/.npmrc; do cat "$f"; echo "[$f $?]"; done`)
		require.NoError(t, err, o)
		assert.NotContains(t, o, "OTHER-CRED-CANARY", "no copy of another credential file")
		assert.NotContains(t, o, "gitlab.example", "no copy of another credential file")
		if prov.Name() == "bwrap" {
			assert.Contains(t, o, "_authToken="+w.v.Sentinel("npm")+"\n[", "a link to a readable file is masked: %s", o)
		}
	})
}
