package sandbox

import (
	"bytes"
	"io"
	"strconv"
	"sync"

	"github.com/cordonhq/cordon/internal/helper"
	"github.com/cordonhq/cordon/internal/peer"
)

// helperRegistry tells the HTTP peer check which processes of a cold
// launch are cordon's own helpers. Under Landlock they run as the user
// with no user namespace between, and they make themselves non-dumpable:
// a cordon that is not root cannot read their descriptors, and without
// this would refuse every new loopback client while a background process
// or any other cold launch runs (internal/peer/helpers_linux.go says why
// passing over them is safe). Under bwrap the processes beneath bwrap are
// in a user namespace cordon's user owns, and readable.
type helperRegistry struct {
	mu       sync.Mutex
	released bool
	releases []func()
}

// landlockOwn: only a Landlock launch has helpers the peer check cannot
// read, and only there are the pids the helper reports the host's.
func landlockOwn(c *ConfinedArgv) bool { return c.Backend == "landlock" && c.reapFD > 0 }

// reaper registers the launch's first process, the reaping helper, which
// never execs again: its child is what becomes the command.
func (r *helperRegistry) reaper(c *ConfinedArgv, pid int) {
	if landlockOwn(c) {
		r.add(peer.RegisterHelper(pid))
	}
}

// readStatus reads the helper's status pipe to its end, registering each
// helper the helper announces (helper.StatusHelper lines) as it arrives,
// and returns what is left: the started or error report.
func (r *helperRegistry) readStatus(c *ConfinedArgv, from io.Reader) string {
	var b []byte
	buf := make([]byte, 512)
	for {
		n, err := from.Read(buf)
		b = append(b, buf[:n]...)
		for bytes.HasPrefix(b, []byte(helper.StatusHelper)) {
			line, rest, ok := bytes.Cut(b, []byte("\n"))
			if !ok {
				break
			}
			b = rest
			pid, perr := strconv.Atoi(string(line[len(helper.StatusHelper):]))
			if perr == nil && pid > 1 && landlockOwn(c) {
				r.add(peer.RegisterHelper(pid))
			}
		}
		if err != nil {
			return string(b)
		}
	}
}

func (r *helperRegistry) add(release func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.released {
		release()
		return
	}
	r.releases = append(r.releases, release)
}

// release forgets every helper registered, once the launch has ended.
func (r *helperRegistry) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.released = true
	for _, f := range r.releases {
		f()
	}
	r.releases = nil
}
