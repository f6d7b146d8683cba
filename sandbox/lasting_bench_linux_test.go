package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// BenchmarkLastingCall is what lasting protection (lasting_linux.go) adds
// to a confined `true` under bwrap, in a workspace that is a git
// repository with a credentials file in the home: "floor" is the same
// call without it (no Landlock read grants around the read-deny list, no
// watch, the guard on missing protected paths only), "lasting" with it.
func BenchmarkLastingCall(b *testing.B) {
	prov := newBwrap()
	f := benchFixture(b, prov)
	if out, err := exec.Command("git", "init", "-q", f.ws).CombinedOutput(); err != nil {
		b.Fatal(err, string(out))
	}
	os.WriteFile(filepath.Join(f.home, ".git-credentials"), []byte("https://u:p@example.com\n"), 0o600)
	p := f.policy(WorkspaceWrite, NetworkDeny)
	cp, _ := p.ToConfined()
	truePath, _ := exec.LookPath("true")
	plan, err := planMounts(cp.Policy())
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, c *ConfinedArgv) {
		l, _ := c.newLaunch()
		if err := l.Start(); err != nil {
			b.Fatal(err)
		}
		if o, err := l.Wait(); err != nil || o.ExitCode != 0 || o.RunnerFailure != "" || o.LostProtection {
			b.Fatal(err, o)
		}
	}
	b.Run("floor", func(b *testing.B) {
		for b.Loop() {
			c, err := prov.Confine([]string{truePath}, cp)
			if err != nil {
				b.Fatal(err)
			}
			c.lasting, c.guard = nil, newLaunchGuard(cp.Policy(), plan.Guard)
			for i := 0; i < len(c.Argv)-1; i++ {
				if c.Argv[i] == "--deny-read" {
					c.Argv = slices.Delete(c.Argv, i, i+2)
					i--
				}
			}
			run(b, c)
		}
	})
	b.Run("lasting", func(b *testing.B) {
		for b.Loop() {
			c, err := prov.Confine([]string{truePath}, cp)
			if err != nil {
				b.Fatal(err)
			}
			if len(c.lasting) == 0 {
				b.Fatal("nothing watched")
			}
			run(b, c)
		}
	})
	// The guard over the existing protected paths alone (.git/config,
	// the hooks, …): recorded before the call, compared after it.
	b.Run("guard-existing-only", func(b *testing.B) {
		for b.Loop() {
			g := newLaunchGuard(cp.Policy(), plan.ProtectExisting)
			if err := g.begin(); err != nil {
				b.Fatal(err)
			}
			if _, err := g.end(); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The watch alone: subscribing a sandbox's paths and leaving.
	b.Run("watch-only", func(b *testing.B) {
		c, _ := prov.Confine([]string{truePath}, cp)
		for b.Loop() {
			stop, err := watchLasting(c.lasting, func(string) {})
			if err != nil {
				b.Fatal(err)
			}
			stop()
		}
	})
}
