//go:build linux

package escape_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/testenv"
)

var modes = []string{"read-only", "workspace-write"}

// backends are the Linux backends that work on this machine: each must
// pass cordon's own probe (`cordon status --json --backend NAME`).
var backends = sync.OnceValue(func() (out []struct{ name, why string }) {
	for _, b := range []string{"bwrap", "landlock"} {
		cmd := exec.Command(bin.cordon, "status", "--json", "--backend", b)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root}
		data, _ := cmd.Output()
		var st struct {
			Status, Reason string
		}
		json.Unmarshal(data, &st)
		why := ""
		if st.Status != "active" {
			why = fmt.Sprintf("backend %s is not available here: %s %s", b, st.Status, st.Reason)
		}
		out = append(out, struct{ name, why string }{b, why})
	}
	return out
})

// TestEscapes runs every case against every backend in both confined
// modes, through `cordon exec` and through the MCP bash tool. Each
// backend×mode has its own world and servers and runs in parallel with
// the others; within it, cases run one after another.
func TestEscapes(t *testing.T) {
	t.Cleanup(func() { summarize(t) })
	for _, b := range backends() {
		for _, mode := range modes {
			t.Run(b.name+"/"+mode, func(t *testing.T) {
				if b.why != "" {
					testenv.SkipUnlessCI(t, b.why)
				}
				t.Parallel()
				g := &group{backend: b.name, mode: mode, w: newWorld(t, b.name+"-"+mode), servers: map[serverKey]*server{}}
				defer g.close()
				for _, c := range cases {
					if !c.applies(mode) {
						continue
					}
					t.Run(c.Name, func(t *testing.T) {
						if why := c.missing(); why != "" {
							testenv.SkipUnlessCI(t, why)
						}
						for _, ch := range []string{"exec", "bash"} {
							if ch == "exec" && c.BashOnly {
								continue
							}
							t.Run(ch, func(t *testing.T) {
								g.attack(t, c, ch)
								if ch == "bash" && c.Race {
									g.raceFence(t, c)
								}
							})
						}
					})
				}
			})
		}
	}
}

// summarize logs the verdicts per backend and mode.
func summarize(t *testing.T) {
	tally.Lock()
	defer tally.Unlock()
	var b strings.Builder
	for _, be := range backends() {
		for _, m := range modes {
			v := tally.m[be.name+"/"+m]
			if v == nil {
				continue
			}
			fmt.Fprintf(&b, "\n  %s/%s: %d blocked, %d refused, %d documented gaps reproduced, %d ESCAPES", be.name, m, v.blocked, v.refused, v.gaps, len(v.escapes))
			for _, e := range v.escapes {
				fmt.Fprintf(&b, "\n      ESCAPE %s", e)
			}
		}
	}
	t.Logf("verdicts (each case through cordon exec, the bash tool and its file-tool fence calls):%s", b.String())
}

// raceFence races write_file through race/d against a bash call that
// keeps swapping race/d between a directory and a symlink to outside: the
// fence resolves relative to directory handles, so no write may land
// outside.
func (g *group) raceFence(t *testing.T, c *escapeCase) {
	r := g.newRun(t, c, "fence-race")
	r.srv = g.server(t, serverKey{home: c.Home, netDeny: c.NetDeny})
	g.w.reset(t)
	before := g.w.snapshot(r.guarded()...)
	loop := fmt.Sprintf(`mkdir -p race/d; end=$((SECONDS+2)); while [ $SECONDS -lt $end ]; do rm -rf race/d; ln -snfT %s race/d; sleep 0.003; rm -f race/d; mkdir -p race/d; sleep 0.001; done 2>/dev/null`, r.out())
	done := make(chan struct{})
	go func() {
		r.srv.call("bash", map[string]any{"command": loop})
		close(done)
	}()
	var during, nRefused int
	var lastOut string
	deadline := time.Now().Add(10 * time.Second)
writes:
	for time.Now().Before(deadline) {
		res, err := r.srv.call("write_file", map[string]any{"path": "race/d/pwn.txt", "content": r.pwn() + "\n"})
		select {
		case <-done:
			break writes
		default:
		}
		if err != nil {
			t.Fatalf("write_file: %v", err)
		}
		during++
		if res.IsError && strings.Contains(resultText(res), "denied") {
			nRefused++
			lastOut = resultText(res)
		}
	}
	<-done
	e := r.collect(before)
	if !e.empty() {
		t.Errorf("ESCAPE [%s/%s via write_file racing a symlink swap] %s:\n%s", g.backend, g.mode, c.Name, e)
		return
	}
	if during == 0 {
		t.Logf("the server ran the calls one after another: the fence race was not exercised")
		return
	}
	t.Logf("%d write_file calls raced the swap, %d refused by the fence (%s), none landed outside", during, nRefused, firstLine(lastOut))
}

// TestPositiveControls runs every attack unconfined (plain bash, no
// cordon) and requires the check to see its effect: a case whose attack cannot
// escape even without a sandbox, or whose check cannot see the escape,
// would pass for the wrong reason.
func TestPositiveControls(t *testing.T) {
	t.Parallel()
	var backend string
	for _, b := range backends() {
		if b.why == "" {
			backend = b.name
			break
		}
	}
	if backend == "" {
		testenv.SkipUnlessCI(t, "no backend works here (needed for the HTTP server of one case)")
	}
	g := &group{backend: backend, mode: "workspace-write", w: newWorld(t, "control"), servers: map[serverKey]*server{}}
	defer g.close()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			switch {
			case c.NoControl != "":
				t.Skipf("no positive control: %s", c.NoControl)
			case c.BashOnly:
				t.Skip("no positive control: the case attacks the MCP tool interface")
			case c.missing() != "":
				testenv.SkipUnlessCI(t, c.missing())
			case c.Unprovable != nil && c.Unprovable() != "":
				t.Skipf("no positive control on this machine: %s", c.Unprovable())
			}
			if c.Serial {
				serial.Lock()
				defer serial.Unlock()
			}
			r := g.newRun(t, c, "control")
			r.backend = "none"
			r.mode = "workspace-write"
			if !c.applies(r.mode) {
				r.mode = c.Modes[0]
			}
			g.w.reset(t)
			if c.Setup != nil {
				c.Setup(r)
			}
			before := g.w.snapshot(r.guarded()...)
			r.execUnconfined(r.script())
			e := r.collect(before)
			if e.empty() {
				t.Errorf("unconfined, the attack left no trace the checks can see: the case cannot tell an escape from a block\noutput:\n%s", indent(r.output))
				return
			}
			t.Logf("unconfined, the attack is seen:\n%s", e)
		})
	}
}

// TestTableIsSound keeps the table honest: unique names, a one-line doc,
// enough cases.
func TestTableIsSound(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Name] {
			t.Errorf("duplicate case %s", c.Name)
		}
		seen[c.Name] = true
		if c.Doc == "" || strings.Contains(c.Doc, "\n") {
			t.Errorf("%s: the doc must be one line", c.Name)
		}
		if c.Script == nil {
			t.Errorf("%s: no script", c.Name)
		}
		for k := range c.Expect {
			b, m, _ := strings.Cut(k, "/")
			if b != "bwrap" && b != "landlock" || m != "" && m != "read-only" && m != "workspace-write" {
				t.Errorf("%s: bad Expect key %q", c.Name, k)
			}
		}
	}
	if len(cases) < 40 {
		t.Errorf("only %d cases; the suite promises at least 40", len(cases))
	}
}

// TestReadmeIsCurrent checks README.md against the table. Regenerate it
// with ESCAPE_UPDATE_README=1 go test -run TestReadmeIsCurrent ./test/escape/
func TestReadmeIsCurrent(t *testing.T) {
	want := renderReadme()
	path := filepath.Join(".", "README.md")
	if os.Getenv("ESCAPE_UPDATE_README") != "" {
		must(t, os.WriteFile(path, []byte(want), 0o644))
		return
	}
	got, err := os.ReadFile(path)
	must(t, err)
	if string(got) != want {
		t.Errorf("README.md is stale: regenerate it with ESCAPE_UPDATE_README=1 go test -run TestReadmeIsCurrent ./test/escape/")
	}
}

func renderReadme() string {
	var b strings.Builder
	b.WriteString(readmeHead)
	fmt.Fprintf(&b, "## The %d cases\n\n", len(cases))
	for _, c := range cases {
		var where []string
		if len(c.Modes) > 0 {
			where = append(where, strings.Join(c.Modes, ", ")+" only")
		}
		if c.Home {
			where = append(where, "workspace = HOME")
		}
		if c.NetDeny {
			where = append(where, "network deny")
		}
		if c.BashOnly {
			where = append(where, "bash tool only")
		}
		if len(c.Fence) > 0 || c.Race {
			where = append(where, "+ file-tool fence check")
		}
		extra := ""
		if len(where) > 0 {
			extra = " [" + strings.Join(where, "; ") + "]"
		}
		fmt.Fprintf(&b, "- `%s` — %s.%s Expected: %s.\n", c.Name, c.Doc, extra, expectation(c))
	}
	b.WriteString(readmeTail)
	return b.String()
}

// expectation renders the table's outcome per backend in one phrase.
func expectation(c *escapeCase) string {
	var parts, phrases []string
	for _, backend := range []string{"bwrap", "landlock"} {
		var per []string
		same := true
		var first *outcome
		for _, m := range modes {
			if !c.applies(m) {
				continue
			}
			o := c.expect(backend, m)
			if first == nil {
				first = &o
			} else if o != *first {
				same = false
			}
			per = append(per, m+": "+o.String())
		}
		if first == nil {
			continue
		}
		phrase := first.String()
		if !same {
			phrase = "(" + strings.Join(per, "; ") + ")"
		}
		phrases = append(phrases, phrase)
		parts = append(parts, backend+" "+phrase)
	}
	if len(phrases) == 2 && phrases[0] == phrases[1] {
		return "both backends " + phrases[0]
	}
	return strings.Join(parts, " · ")
}

func (o outcome) String() string {
	switch {
	case o.refused:
		return "refused — " + o.why
	case !o.gap:
		return "blocked"
	case o.intact:
		return "documented gap, file system intact — " + o.why
	default:
		return "documented gap — " + o.why
	}
}

const readmeHead = "# cordon escape suite\n\n" +
	"An adversarial table of known sandbox-escape techniques, run by `go test ./test/escape/`\n" +
	"(from the repository root; `-race` and `go vet` clean) against every Linux backend that\n" +
	"works on the machine (bwrap, landlock), in both confined modes (read-only,\n" +
	"workspace-write), through **both** `cordon exec` (the built binary) and the MCP `bash`\n" +
	"tool (the same binary as `cordon serve` over stdio, driven by the official go-sdk client,\n" +
	"protocol 2025-11-25).\n\n" +
	"Every verdict is proved on the machine, not on an error message: a snapshot of the\n" +
	"guarded trees (everything outside the writable workspace, plus the protected paths inside\n" +
	"it: type, mode, owner, size, mtime, content hash, link target, link count, xattrs) before\n" +
	"and after, planted secrets absent from the output, listeners that must receive nothing,\n" +
	"a terminal that must receive no keystrokes, host processes that must stay alive (with their\n" +
	"resource limits), no process of the command left once its call returned, host keys and SysV\n" +
	"IPC objects unchanged, what the human runs next (`git commit`, `git status` and `git submodule\n" +
	"update` in every repository concerned, an interactive bash, programs on a login PATH,\n" +
	"`kubectl get pods`) running nothing planted, and `cordon status` of the next start unchanged.\n\n" +
	"- **blocked**: no trace at all. A trace fails the test with `ESCAPE [backend/mode via\n" +
	"  channel] case — doc`, the evidence and the command's output.\n" +
	"- **refused**: the backend cannot confine the policy (a writable root that holds\n" +
	"  the home directory, on every backend), so cordon must refuse it: the command\n" +
	"  never runs (`cordon exec` exits 125 with `cordon: sandbox unavailable:`, the bash tool\n" +
	"  answers `isError` with `SANDBOX_UNAVAILABLE`) and nothing changes.\n" +
	"- **documented gap**: a limitation README.md's *Limitations* (and `cordon status`)\n" +
	"  already states. The suite asserts it still reproduces (so the docs stay true) and runs the\n" +
	"  equivalent `write_file`/`read_file` call to show that the FS fence refuses it.\n\n" +
	"`TestPositiveControls` runs each attack once unconfined (`--mode danger-full-access`) and\n" +
	"requires the checks to see it, so that no case passes because its attack was broken.\n\n" +
	"The world lives under /var/tmp: a workspace, a directory outside, a fake HOME (`~/.ssh`,\n" +
	"`~/.aws`, `~/.netrc` canaries, shell start-up files, `~/.config/cordon/config.toml`, the\n" +
	"state dir `~/.local/state/cordon`), a fake `$XDG_RUNTIME_DIR` with a session-bus socket,\n" +
	"files cordon holds open as fds 3-5, a pty as cordon's controlling terminal (fd 6), a host\n" +
	"process to kill, TCP/UDP/unix/abstract listeners, and `/run/docker.sock` when no Docker\n" +
	"daemon owns it. The suite runs in a session keyring of its own (as a login session has one),\n" +
	"which every cordon it starts inherits. cordon runs as whatever user runs the tests; as root,\n" +
	"no denial can come from file permissions, only from the sandbox.\n\n" +
	"This file is generated from the table in `escape_cases_test.go`; `TestReadmeIsCurrent`\n" +
	"fails when it is stale. Regenerate with\n" +
	"`ESCAPE_UPDATE_README=1 go test -run TestReadmeIsCurrent ./test/escape/`.\n\n"

const readmeTail = "\n## Adding a case\n\n" +
	"Append an `escapeCase` to `cases`: a name, a one-line `Doc` with a reference where there\n" +
	"is one, an optional `Setup` (fixtures planted from the host), the attacker `Script` (bash;\n" +
	"`r.probe()` is a small program for raw system calls), an optional `Check` for effects\n" +
	"outside the file system, `Expect` for documented gaps only, and `Fence` for the\n" +
	"equivalent file-tool calls. Then regenerate this file.\n"
