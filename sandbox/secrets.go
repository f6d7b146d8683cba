package sandbox

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/cordonhq/cordon/internal/secrets"
)

// A command under network restricted in a session with secrets sees each
// one only as its sentinel, in the variable the human named, and trusts
// the session's CA (with the system's roots) through the variables every
// common TLS client reads, so that the egress proxy can look inside its
// TLS and put the real values in for their hosts (internal/egress). The
// CA's key and the values stay in cordon's memory; the bundle file in the
// proxy's directory holds certificates only.

// bundleName is the trust bundle's file in the egress directory.
const bundleName = "ca.pem"

// withSecrets writes the trust bundle into ep.dir and remembers where the
// command finds it: under bwrap in the directory bound at
// egressSocketDir, elsewhere at its own path.
func (ep *egressEndpoint) withSecrets(v *secrets.Vault, bound bool) error {
	path := filepath.Join(ep.dir, bundleName)
	if err := os.WriteFile(path, v.TrustBundle(), 0o644); err != nil {
		return err
	}
	// The directory is the proxy's (0700): under Landlock the command,
	// the same user, reads the bundle through it.
	ep.secrets, ep.bundleInside = v, path
	if bound {
		ep.bundleInside = egressSocketDir + "/" + bundleName
	}
	return nil
}

// secretEnv is the sentinels and the trust variables.
func (ep *egressEndpoint) secretEnv() []string {
	if ep.secrets == nil {
		return nil
	}
	return append(secrets.TrustEnv(ep.bundleInside), ep.secrets.Env()...)
}

// scrubEnv drops every variable that holds a real secret value (passed
// through by a wide env_passthrough, or under another name): only the
// sentinels may reach the command.
func (ep *egressEndpoint) scrubEnv(env []string) []string {
	if ep == nil || ep.secrets == nil {
		return env
	}
	out := env[:0:0]
	for _, kv := range env {
		_, val, _ := strings.Cut(kv, "=")
		if !ep.secrets.Holds(val) {
			out = append(out, kv)
		}
	}
	return out
}
