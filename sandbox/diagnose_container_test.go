package sandbox

import (
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
)

func fakeHost(files map[string]string, env map[string]string) hostFiles {
	return hostFiles{
		exists: func(p string) bool { _, ok := files[p]; return ok },
		readFile: func(p string) ([]byte, error) {
			if s, ok := files[p]; ok {
				return []byte(s), nil
			}
			return nil, fs.ErrNotExist
		},
		getenv: func(k string) string { return env[k] },
	}
}

const (
	statusFiltered = "Name:\tcordon\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n"
	statusPlain    = "Name:\tcordon\nSeccomp:\t0\nSeccomp_filters:\t0\n"
)

func TestReadContainerHints(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    map[string]string
		env      map[string]string
		evidence []string
		seccomp  bool
	}{
		{"host", map[string]string{"/proc/self/cgroup": "0::/user.slice/user-1000.slice/session-2.scope\n", "/proc/self/status": statusPlain}, nil, nil, false},
		{"docker", map[string]string{"/.dockerenv": "", "/proc/self/cgroup": "0::/\n", "/proc/self/status": statusFiltered}, nil, []string{"/.dockerenv"}, true},
		{"podman", map[string]string{"/run/.containerenv": "", "/proc/self/status": statusFiltered}, map[string]string{"container": "podman"}, []string{"/run/.containerenv", "$container=podman"}, true},
		{"kubernetes cgroup v1", map[string]string{"/proc/self/cgroup": "12:pids:/kubepods/besteffort/pod1/abc\n11:cpu:/kubepods/besteffort/pod1/abc\n", "/proc/self/status": statusFiltered}, nil, []string{"cgroup /kubepods/besteffort/pod1/abc"}, true},
		{"seccomp only", map[string]string{"/proc/self/status": statusFiltered}, nil, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := readContainerHints(fakeHost(tc.files, tc.env))
			assert.Equal(t, tc.evidence, h.Evidence)
			assert.Equal(t, tc.seccomp, h.SeccompFiltered)
		})
	}
}

// pinContainerHints makes the diagnosis see h, whatever machine runs the test.
func pinContainerHints(t *testing.T, h containerHints) {
	saved := detectContainerHints
	detectContainerHints = func() containerHints { return h }
	t.Cleanup(func() { detectContainerHints = saved })
}

func TestExplainBwrapFailureInContainer(t *testing.T) {
	// What bwrap 0.8 prints under Docker's default seccomp profile, and
	// when the profile allows unshare but /proc is masked.
	for _, raw := range []string{
		"bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces. On e.g. debian this can be enabled with 'sysctl kernel.unprivileged_userns_clone=1'.",
		"bwrap: Can't mount proc on /newroot/proc: Operation not permitted",
	} {
		pinContainerHints(t, containerHints{Evidence: []string{"/.dockerenv"}, SeccompFiltered: true})
		msg := explainBwrapFailure([]byte(raw + "\n"))
		assert.Contains(t, msg, raw)
		assert.Contains(t, msg, "in a container (/.dockerenv) under a seccomp filter")
		assert.Contains(t, msg, "default seccomp profile")
		assert.Contains(t, msg, "masked /proc")
		assert.Contains(t, msg, "selects Landlock by itself")
		assert.Contains(t, msg, "--security-opt seccomp=unconfined")
		assert.Contains(t, msg, "--privileged")
		assert.NotContains(t, msg, "apparmor_parser", "the host's AppArmor is not the cause in a container")
	}

	// A seccomp filter without a container's marks is named as such.
	pinContainerHints(t, containerHints{SeccompFiltered: true})
	msg := explainBwrapFailure([]byte("bwrap: setting up uid map: Permission denied"))
	assert.Contains(t, msg, "runs under a seccomp filter (Seccomp: 2 in /proc/self/status)")

	// On a plain host the AppArmor and sysctl advice stays.
	pinContainerHints(t, containerHints{})
	msg = explainBwrapFailure([]byte("bwrap: setting up uid map: Permission denied"))
	assert.Contains(t, msg, "AppArmor")
	assert.NotContains(t, msg, "container")

	// A failure that is not about namespaces is passed through as it is.
	pinContainerHints(t, containerHints{Evidence: []string{"/.dockerenv"}, SeccompFiltered: true})
	assert.Equal(t, "bwrap: Unknown option --frobnicate", explainBwrapFailure([]byte("bwrap: Unknown option --frobnicate")))
}
