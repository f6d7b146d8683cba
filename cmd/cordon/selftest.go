package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/spf13/cobra"
)

func newTestCmd() *cobra.Command {
	var f sandboxFlags
	cmd := &cobra.Command{
		Use:   "test [flags]",
		Short: "prove containment now (exit 0 only when proved)",
		Long: `Prove containment now: a file outside the boundary that this user may
write without the sandbox must be refused inside it. The file is opened
for appending, and not a byte is written. Exit 0 only when proved.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTest(&f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.register(cmd, false)
	return cmd
}

// runTest proves containment now: a file outside the boundary that this
// user can write outside the sandbox must be refused inside it. It opens
// the file for appending without writing a byte, so nothing changes. A
// verdict other than contained is printed and exits 1.
func runTest(f *sandboxFlags, stdout, stderr io.Writer) error {
	d, err := f.resolve()
	if err != nil {
		return err
	}
	d.warnings(func(msg string) { fmt.Fprintf(stderr, "cordon: warning: %s\n", msg) })
	if d.settings.Mode == sandbox.DangerFullAccess {
		fmt.Fprintln(stdout, "not proved: danger-full-access runs commands unconfined by definition")
		return exitCode(exitFailure)
	}
	ex := d.executor(nil)
	st := ex.Status()
	if st.State != sandbox.StateActive {
		fmt.Fprintf(stdout, "not proved: the sandbox is %s: %s\n", st.State, st.Reason)
		return exitCode(exitFailure)
	}
	tmp, err := sandbox.NewSessionTmp(d.settings.StateDir)
	if err != nil {
		return err
	}
	defer tmp.Remove()
	svc := sandbox.PolicyService{Settings: d.settings}
	pol, err := svc.Resolve(sandbox.Request{TmpDir: tmp.Path})
	if err != nil {
		return err
	}
	target, err := containmentTarget(pol)
	if err != nil {
		// No file of the system or the user to test against: make one of
		// our own, outside the boundary, and remove it afterwards.
		scratch, serr := scratchOutside(pol, d.settings.StateDir)
		if serr != nil {
			fmt.Fprintf(stdout, "not proved: %v; and no scratch directory outside the boundary: %v\n", err, serr)
			return exitCode(exitFailure)
		}
		defer os.RemoveAll(scratch)
		target = filepath.Join(scratch, "canary")
		if werr := os.WriteFile(target, []byte("canary\n"), 0o644); werr != nil {
			fmt.Fprintf(stdout, "not proved: %v; and %v\n", err, werr)
			return exitCode(exitFailure)
		}
	}
	before, _ := os.Stat(target)
	out, exit, err := runConfinedCapture(ex, pol, []string{"/bin/sh", "-c", `: >> "$1"`, "sh", target})
	if err != nil {
		fmt.Fprintf(stdout, "not proved: %v\n", err)
		return exitCode(exitFailure)
	}
	after, _ := os.Stat(target)
	if exit == 0 || before == nil || after == nil || before.Size() != after.Size() || !before.ModTime().Equal(after.ModTime()) {
		fmt.Fprintf(stdout, "NOT CONTAINED: %s could be opened for writing inside the sandbox (backend %s)\n", target, st.Backend)
		return exitCode(exitFailure)
	}
	why := strings.TrimSpace(string(out))
	fmt.Fprintf(stdout, "contained: backend %s %s (%s enforcement), mode %s\n", st.Backend, st.Version, st.Enforcement, pol.Mode)
	fmt.Fprintf(stdout, "  %s is writable outside the sandbox and was refused inside it: %s\n", target, lastLine(why))
	for _, u := range st.Unenforced {
		fmt.Fprintf(stdout, "  not enforced by the OS: %s\n", u)
	}
	return nil
}

// scratchOutside makes a scratch directory outside every writable root
// and the read-deny list, where a refusal proves the write boundary: under
// the state dir, unless (as by default) the read-deny list holds it, else
// in the user's cache or /var/tmp. A fresh HOME, as a container's tmpfs,
// has no file of the user's to test against, only these.
func scratchOutside(p sandbox.ExecutionPolicy, stateDir string) (string, error) {
	var firstErr error
	for _, base := range []string{stateDir, ""} {
		dir, err := sandbox.ScratchDir(base)
		if err != nil {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		if outsideAll(filepath.Join(dir, "canary"), p) {
			return dir, nil
		}
		os.RemoveAll(dir)
		firstErr = cmp.Or(firstErr, fmt.Errorf("%s is inside the boundary", dir))
	}
	return "", firstErr
}

// containmentTarget picks an existing regular file outside the writable
// roots that this user could write without the sandbox, so that only the
// sandbox can explain a refusal: a root-owned system file when we are
// root, else a file of the user's own.
func containmentTarget(p sandbox.ExecutionPolicy) (string, error) {
	home, _ := os.UserHomeDir()
	candidates := []string{"/etc/hostname", "/etc/hosts"}
	for _, name := range []string{".profile", ".bashrc", ".gitconfig"} {
		candidates = append(candidates, filepath.Join(home, name))
	}
	for _, c := range candidates {
		real, err := filepath.EvalSymlinks(c)
		if err != nil {
			continue
		}
		fi, err := os.Stat(real)
		if err != nil || !fi.Mode().IsRegular() || outsideAll(real, p) == false {
			continue
		}
		if writableByMe(real) {
			return real, nil
		}
	}
	return "", errors.New("found no file outside the boundary that this user may write without the sandbox, so a refusal would prove nothing")
}

func outsideAll(path string, p sandbox.ExecutionPolicy) bool {
	for _, r := range p.WritableRoots {
		if sandbox.Within(path, r) {
			return false
		}
	}
	for _, d := range p.ReadDeny {
		if sandbox.Within(path, d) {
			return false
		}
	}
	return true
}

func runConfinedCapture(ex *sandbox.Executor, p sandbox.ExecutionPolicy, argv []string) ([]byte, int, error) {
	var out bytes.Buffer
	res, err := ex.Run(context.Background(), p, sandbox.RunSpec{Argv: argv, Dir: p.WorkspaceRoot,
		Env: sandbox.Environ(os.Environ(), nil), Stdout: &out, Stderr: &out})
	if err != nil {
		return out.Bytes(), 0, err
	}
	if res.Ending == sandbox.RunnerFailed {
		return out.Bytes(), res.ExitCode, fmt.Errorf("sandbox runner failed: %s", res.RunnerFailure)
	}
	return out.Bytes(), res.ExitCode, nil
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
