package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cordonhq/cordon/internal/helper"
)

// BenchmarkConfineExecTrue compares a confined `true` with its floor: a plain
// fork+exec, and bwrap running the same argv without cordon's helper. The
// differences are cordon's own cost per command.
//
// As in production, the lean cordon-helper is built beside the executable
// (here the test binary), so the helper does not pay for a test binary's
// start-up.
func BenchmarkConfineExecTrue(b *testing.B) {
	self, _ := os.Executable()
	lean := filepath.Join(filepath.Dir(self), helperBinary)
	if out, err := exec.Command("go", "build", "-o", lean, "../cmd/cordon-helper").CombinedOutput(); err != nil {
		b.Fatalf("building the helper: %v\n%s", err, out)
	}
	if p, _ := helperPath(); p != lean {
		b.Fatalf("the benchmark must use the lean helper, got %s", p)
	}
	truePath, _ := exec.LookPath("true")
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command(truePath).Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The helper on its own, outside any backend: its start-up (a Go
	// runtime), the privilege drop and the seccomp filter, then exec.
	b.Run("helper-alone", func(b *testing.B) {
		for b.Loop() {
			if out, err := exec.Command(lean, helper.Arg, "--", truePath).CombinedOutput(); err != nil {
				b.Fatal(err, string(out))
			}
		}
	})
	for _, prov := range []Backend{newBwrap(), newLandlock()} {
		f := benchFixture(b, prov)
		pol := f.policy(WorkspaceWrite, NetworkAllow)
		cp, _ := pol.ToConfined()
		b.Run(prov.Name(), func(b *testing.B) {
			for b.Loop() {
				c, err := prov.Confine([]string{truePath}, cp)
				if err != nil {
					b.Fatal(err)
				}
				l, _ := c.newLaunch()
				if err := l.Start(); err != nil {
					b.Fatal(err)
				}
				if o, err := l.Wait(); err != nil || o.ExitCode != 0 || o.RunnerFailure != "" {
					b.Fatal(err, o)
				}
			}
		})
		if prov.Name() == "landlock" {
			// The same without a read-deny list: what granting reads
			// around it (readgrants_linux.go) costs per command.
			open := pol
			open.ReadDeny = nil
			ocp, _ := open.ToConfined()
			b.Run("landlock-reads-everywhere", func(b *testing.B) {
				for b.Loop() {
					c, err := prov.Confine([]string{truePath}, ocp)
					if err != nil {
						b.Fatal(err)
					}
					l, _ := c.newLaunch()
					if err := l.Start(); err != nil {
						b.Fatal(err)
					}
					if o, err := l.Wait(); err != nil || o.ExitCode != 0 {
						b.Fatal(err, o)
					}
				}
			})
		}
		// The server's way: a warm sandbox per policy (warm_linux.go).
		ex := &Executor{Backends: &Backends{Forced: prov.Name()}, Requirement: Required, Warm: true}
		b.Run(prov.Name()+"-warm", func(b *testing.B) {
			for b.Loop() {
				res, err := ex.Run(b.Context(), pol, RunSpec{Argv: []string{truePath}, Dir: f.ws, OwnGroup: true})
				if err != nil || res.ExitCode != 0 || res.Ending != Exited {
					b.Fatal(err, res)
				}
			}
		})
		ex.Close()
		if prov.Name() == "bwrap" {
			c, _ := prov.Confine([]string{truePath}, cp)
			c.Cleanup()
			bare := bareBwrapArgv(c.Argv, truePath)
			b.Run("bwrap-bare", func(b *testing.B) {
				for b.Loop() {
					if err := exec.Command(bare[0], bare[1:]...).Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// bareBwrapArgv is the same bwrap argv with the helper cut out.
func bareBwrapArgv(argv []string, cmd string) []string {
	// bwrap comes after its reaper's arguments.
	for i, a := range argv {
		if a == "--" && i+1 < len(argv) && filepath.Base(argv[i+1]) == "bwrap" {
			argv = argv[i+1:]
			break
		}
	}
	for i, a := range argv {
		if a == "--" {
			return append(append([]string{}, argv[:i+1]...), cmd)
		}
	}
	return argv
}

func BenchmarkProbe(b *testing.B) {
	for _, prov := range []Backend{newBwrap(), newLandlock()} {
		b.Run(prov.Name(), func(b *testing.B) {
			for b.Loop() {
				if res := probeBackend(prov, b.TempDir()); !res.OK {
					b.Fatal(res.Reason)
				}
			}
		})
	}
}

func benchFixture(b *testing.B, prov Backend) *fixture { return newFixture(b, prov) }

// BenchmarkConfine is the cost of building a confined argv (policy to
// argv, mount plan, stub registry), without running anything.
func BenchmarkConfine(b *testing.B) {
	for _, prov := range []Backend{newBwrap(), newLandlock()} {
		f := benchFixture(b, prov)
		cp, _ := f.policy(WorkspaceWrite, NetworkDeny).ToConfined()
		b.Run(prov.Name(), func(b *testing.B) {
			for b.Loop() {
				c, err := prov.Confine([]string{"true"}, cp)
				if err != nil {
					b.Fatal(err)
				}
				c.Cleanup()
			}
		})
	}
}

// BenchmarkReadGrants is the work the Landlock helper adds per command to
// keep the read-deny list unreadable: walking the directories on the way
// to each entry and naming their other entries. It uses this machine's own
// home and state directory, as `cordon exec` would.
func BenchmarkReadGrants(b *testing.B) {
	home, _ := os.UserHomeDir()
	svc := PolicyService{Settings: Settings{Mode: ReadOnly, Workspace: b.TempDir(), Home: home, StateDir: filepath.Join(home, ".local", "state", "cordon")}}
	p, err := svc.Resolve(Request{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		helper.ReadRules(p.ReadDeny)
	}
}

// BenchmarkGuard is what recording and checking the protected paths that
// no mount can cover adds to each confined command (package guard): joining the
// store before the command and leaving it after.
func BenchmarkGuard(b *testing.B) {
	for _, prov := range []Backend{newBwrap(), newLandlock()} {
		f := benchFixture(b, prov)
		cp, _ := f.policy(WorkspaceWrite, NetworkDeny).ToConfined()
		c, err := prov.Confine([]string{"true"}, cp)
		if err != nil {
			b.Fatal(err)
		}
		c.Cleanup()
		b.Run(prov.Name(), func(b *testing.B) {
			for b.Loop() {
				if err := c.guard.begin(); err != nil {
					b.Fatal(err)
				}
				if changes, err := c.guard.end(); err != nil || len(changes) > 0 {
					b.Fatal(err, changes)
				}
			}
			b.ReportMetric(float64(len(c.guard.paths())), "paths")
		})
	}
}
