package sandbox

import (
	"os"
	"path/filepath"
)

// Under bwrap, network restricted captures the programs that ignore the
// proxy variables: the egress bridge, in a network namespace the helper
// makes, answers DNS with fake addresses and tunnels connections to them
// on ports 80 and 443 through the proxy (internal/helper/capture_linux.go).
// The sandbox's resolv.conf names that stub, over TCP (use-vc), since the
// seccomp filter allows no UDP socket.

// captureResolvConf is the sandbox's resolv.conf.
const captureResolvConf = "# cordon: names are answered by the egress bridge, and every connection goes through the egress proxy\nnameserver 127.0.0.1\noptions use-vc attempts:2 timeout:5\n"

// captureArgs binds the stub's resolv.conf over the host's, where the
// host has one to bind over (bwrap cannot create a file in the read-only
// root); a symlinked one (systemd-resolved) is covered at its target.
// Without it a program that ignores the proxy resolves nothing, and so
// reaches nothing, as without capture.
func (ep *egressEndpoint) captureArgs() []string {
	target, err := filepath.EvalSymlinks("/etc/resolv.conf")
	if err != nil {
		return nil
	}
	if fi, err := os.Stat(target); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	conf := filepath.Join(ep.dir, "resolv.conf")
	if err := os.WriteFile(conf, []byte(captureResolvConf), 0o644); err != nil {
		return nil
	}
	return []string{"--ro-bind", conf, target}
}

// captureCaps are what the helper needs, as a user other than root, to
// make the capture's network namespace and bind its ports; it drops them
// all before the command runs. bwrap keeps every capability for root in
// its namespace, and would keep only these if asked; a setuid bwrap
// refuses --cap-add from anyone but root, and then the command runs
// without capture (isolateNet fails: no network for programs that ignore
// the proxy).
func captureCaps(bwrapPath string) []string { return captureCapsFor(os.Geteuid(), bwrapPath) }

func captureCapsFor(euid int, bwrapPath string) []string {
	if euid == 0 {
		return nil
	}
	if fi, err := os.Stat(bwrapPath); err != nil || fi.Mode()&os.ModeSetuid != 0 {
		return nil
	}
	return []string{"--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_NET_ADMIN", "--cap-add", "CAP_NET_BIND_SERVICE"}
}
