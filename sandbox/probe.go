package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cordonhq/cordon/internal/peer"
)

// probeResult is the outcome of running a backend's real argv.
type probeResult struct {
	OK       bool
	Reason   string
	Duration time.Duration
}

const canaryContent = "cordon probe canary\n"

// Probe proves that a backend works here by running its real generated
// argv twice: a permissive run must succeed, and a run that writes to the
// workspace and then to a canary outside the writable roots must see the
// first write land and the second denied. A builder that forgets a flag
// fails here.
func probeBackend(prov Backend, stateDir string) probeResult {
	start := time.Now()
	res := probe(prov, stateDir)
	res.Duration = time.Since(start)
	return res
}

func probe(prov Backend, stateDir string) probeResult {
	if err := prov.Available(); err != nil {
		return probeResult{Reason: err.Error()}
	}
	base, err := probeBase(stateDir)
	if err != nil {
		return probeResult{Reason: "probe: " + err.Error()}
	}
	defer os.RemoveAll(base)
	ws, tmp := filepath.Join(base, "workspace"), filepath.Join(base, "tmp")
	canary := filepath.Join(base, "canary")
	for _, d := range []string{ws, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return probeResult{Reason: "probe: " + err.Error()}
		}
	}
	if err := os.WriteFile(canary, []byte(canaryContent), 0o644); err != nil {
		return probeResult{Reason: "probe: " + err.Error()}
	}
	svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: ws, Network: NetworkAllow}}
	pol, err := svc.Resolve(Request{TmpDir: tmp})
	if err != nil {
		return probeResult{Reason: "probe: " + err.Error()}
	}
	cp, err := pol.ToConfined()
	if err != nil {
		return probeResult{Reason: "probe: " + err.Error()}
	}
	marker := filepath.Join(ws, "probe-ok")
	permissive, write := probeCommands(marker, canary)
	// The two runs are independent: run them side by side, since the
	// probe is most of cordon's start-up (BenchmarkProbe).
	type ran struct {
		out []byte
		err error
	}
	permissiveDone := make(chan ran, 1)
	go func() {
		out, err := probeRun(prov, cp, ws, permissive...)
		permissiveDone <- ran{out, err}
	}()
	out, err := probeRun(prov, cp, ws, write...)
	if p := <-permissiveDone; p.err != nil {
		return probeResult{Reason: fmt.Sprintf("a permissive run failed: %v%s", p.err, explainOutput(prov, p.out))}
	}
	if data, _ := os.ReadFile(canary); string(data) != canaryContent {
		return probeResult{Reason: "a write outside the writable roots was NOT denied: the backend does not confine"}
	}
	if data, _ := os.ReadFile(marker); strings.TrimSpace(string(data)) != "ok" {
		return probeResult{Reason: fmt.Sprintf("a write inside the workspace failed (%v)%s", err, explainOutput(prov, out))}
	}
	if err == nil {
		return probeResult{Reason: "the canary write reported success although the file is unchanged"}
	}
	return probeResult{OK: true}
}

func explainOutput(prov Backend, out []byte) string {
	if len(bytes.TrimSpace(out)) == 0 {
		return ""
	}
	if prov.Name() == "bwrap" {
		return ": " + explainBwrapFailure(out)
	}
	return ": " + string(bytes.TrimSpace(out))
}

func probeRun(prov Backend, cp ConfinedPolicy, dir string, argv ...string) ([]byte, error) {
	c, err := prov.Confine(argv, cp)
	if err != nil {
		return nil, err
	}
	l, err := c.newLaunch()
	if err != nil {
		c.Cleanup()
		return nil, err
	}
	var out bytes.Buffer
	l.Cmd.Stdout, l.Cmd.Stderr, l.Cmd.Dir = &out, &out, dir
	l.Cmd.Env = Environ(os.Environ(), nil)
	if err := l.Start(); err != nil {
		return out.Bytes(), err
	}
	// What runs there is cordon's own probe, never a model's command: all
	// of it is cordon's, and the HTTP peer check may pass over its
	// helpers, which a cordon that is not root cannot read.
	_, release := peer.RegisterStarting(l.Cmd.Process.Pid)
	defer release()
	o, err := l.Wait()
	switch {
	case err != nil:
		return out.Bytes(), err
	case o.RunnerFailure != "":
		return out.Bytes(), errors.New(o.RunnerFailure)
	case o.ExitCode != 0:
		return out.Bytes(), fmt.Errorf("exit status %d", o.ExitCode)
	}
	return out.Bytes(), nil
}

// ScratchDir makes a fresh directory that stays visible inside every
// backend (see probeBase); the caller removes it.
func ScratchDir(stateDir string) (string, error) { return probeBase(stateDir) }

// probeBase makes a scratch directory that stays visible inside every
// backend: not under /tmp (bwrap replaces it) and not under the read-deny
// list. Under the state dir first (cordon's own place: a HOME it was told
// to leave alone stays untouched, and a read-only root does not matter),
// then the user's cache directory when no state dir is named, then
// /var/tmp.
func probeBase(stateDir string) (string, error) {
	var bases []string
	if stateDir != "" && !underTmp(stateDir) {
		bases = append(bases, filepath.Join(stateDir, "probe"))
	} else if cache, err := os.UserCacheDir(); err == nil && stateDir == "" {
		bases = append(bases, filepath.Join(cache, "cordon"))
	}
	bases = append(bases, "/var/tmp", os.TempDir())
	var firstErr error
	for _, b := range bases {
		if err := os.MkdirAll(b, 0o700); err != nil {
			firstErr = cmpOr(firstErr, err)
			continue
		}
		dir, err := os.MkdirTemp(b, "probe-")
		if err == nil {
			return dir, nil
		}
		firstErr = cmpOr(firstErr, err)
	}
	return "", firstErr
}

// underTmp says whether dir is beneath /tmp, which bwrap replaces.
func underTmp(dir string) bool {
	rel, err := filepath.Rel("/tmp", dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
