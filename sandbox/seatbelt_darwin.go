package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// seatbeltBackend confines with macOS Seatbelt: /usr/bin/sandbox-exec
// runs the command under an SBPL profile generated from the policy (see
// seatbelt_profile.go). It needs no helper and leaves nothing on the host.
//
// Apple documents sandbox-exec as deprecated, yet it is what macOS's own
// tools and every agent sandbox on macOS run; the probe proves at start-up
// that it still works here.
type seatbeltBackend struct {
	once    sync.Once
	version string
	err     error
}

// newSeatbelt returns the macOS Seatbelt backend.
func newSeatbelt() Backend { return &seatbeltBackend{} }

func (s *seatbeltBackend) Name() string { return "seatbelt" }

func (s *seatbeltBackend) detect() {
	s.once.Do(func() {
		fi, err := os.Stat(seatbeltExec)
		switch {
		case err != nil:
			s.err = fmt.Errorf("%s not found (%v): Seatbelt is part of macOS, is this macOS?", seatbeltExec, err)
		case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
			s.err = fmt.Errorf("%s is not an executable file", seatbeltExec)
		}
		if out, err := exec.Command("/usr/bin/sw_vers", "-productVersion").Output(); err == nil {
			if v := strings.TrimSpace(string(out)); v != "" {
				s.version = "macOS " + v
			}
		}
	})
}

// Version is the macOS version, which decides what Seatbelt can do.
func (s *seatbeltBackend) Version() string {
	s.detect()
	return s.version
}

func (s *seatbeltBackend) Available() error {
	s.detect()
	return s.err
}

// Limits reports what Seatbelt cannot enforce: only the private /tmp.
// Writes, protected paths (existing or not), the read-deny list and the
// network are enforced by the kernel.
func (s *seatbeltBackend) Limits() (Enforcement, []string) {
	return EnforcementPartial, seatbeltUnenforced
}

func (s *seatbeltBackend) Confine(argv []string, cp ConfinedPolicy) (*ConfinedArgv, error) {
	if err := confinable(s, argv); err != nil {
		return nil, err
	}
	p := cp.Policy()
	spec, err := seatbeltProfile(p, callFacts{egress: cp.egress, dockerSockets: seatbeltDockerSockets()})
	if err != nil {
		return nil, err
	}
	args := append([]string{seatbeltExec}, spec.args()...)
	args = append(args, "--")
	args = append(args, argv...)
	enf, un := s.Limits()
	c := &ConfinedArgv{
		Backend:            "seatbelt",
		Argv:               args,
		Enforcement:        enf,
		Unenforced:         un,
		DenialSignatures:   seatbeltDenialSignatures,
		RunnerFailureRules: seatbeltRunnerRules,
	}
	if p.TmpDir != "" {
		// Seatbelt cannot put the session tmp at /tmp: point at it instead.
		c.Env = []string{"TMPDIR=" + p.TmpDir}
	}
	return c, nil
}

// seatbeltDockerSockets finds the Docker daemons' sockets on this machine
// (Docker Desktop, Colima, OrbStack, Rancher Desktop, DOCKER_HOST): the
// daemon acts as root in a VM that mounts the user's files, so the profile
// refuses them even when they lie in a writable root.
func seatbeltDockerSockets() []string {
	candidates := []string{"/var/run/docker.sock"}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates,
			filepath.Join(home, ".docker", "run", "docker.sock"),
			filepath.Join(home, ".colima", "default", "docker.sock"),
			filepath.Join(home, ".orbstack", "run", "docker.sock"),
			filepath.Join(home, ".rd", "docker.sock"))
	}
	if path, ok := strings.CutPrefix(os.Getenv("DOCKER_HOST"), "unix://"); ok && filepath.IsAbs(path) {
		candidates = append(candidates, path)
	}
	var out []string
	for _, c := range candidates {
		if real, err := filepath.EvalSymlinks(c); err == nil {
			out = appendMissing(out, real)
		}
	}
	return out
}
