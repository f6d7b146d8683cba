package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cordonhq/cordon/internal/pathx"
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
// egressSocketDir, elsewhere at its own path. Under bwrap it also masks
// the secrets' files outside the writable roots.
func (ep *egressEndpoint) withSecrets(v *secrets.Vault, bound bool, p ExecutionPolicy) error {
	path := filepath.Join(ep.dir, bundleName)
	if err := os.WriteFile(path, v.TrustBundle(), 0o644); err != nil {
		return err
	}
	// The directory is the proxy's (0700): under Landlock the command,
	// the same user, reads the bundle through it.
	ep.secrets, ep.bundleInside = v, path
	if bound {
		ep.bundleInside = egressSocketDir + "/" + bundleName
		ep.maskFiles(v, p)
	}
	return nil
}

// SecretFilesSeen says, for status, what a command under network
// restricted sees at a secret's files with the named backend ("" for any).
func SecretFilesSeen(backend string) string {
	const masked = "a read-only copy in which each secret's value is its sentinel, made at each command's start"
	const denied = "unreadable, denied like every read-deny entry (the masked copy is bwrap-only); one in a writable root refuses the sandbox"
	switch backend {
	case "bwrap":
		return masked + "; never the real file (one in a writable root is hidden, not masked)"
	case "":
		return "never the real file: under bwrap with network restricted " + masked + "; elsewhere (Landlock, Seatbelt, network allow or deny) " + denied
	}
	return denied
}

// maskFiles writes, for each secret file that exists, a copy with the
// sentinels in place of the values into ep.dir, which the command cannot
// write (bound read-only, 0700 on the host), for bwrap to bind over the
// file. It is made at each sandbox start, so a file the host changed
// between calls is masked as it is now. A file that cannot be masked
// (not a regular file, too large) gets no copy: it stays hidden, as every
// read-deny entry is.
//
// A file in a root that is writable now or in another mode (the workspace
// in read-only mode too), or reached through one (a symlink or a directory
// on the way), is hidden, not masked: a command could have made it a link
// to another credential (.npmrc -> ~/.ssh/id_ed25519), whose copy, holding
// no secret's value, would be shown whole.
//
// Roots this session never writes may be another session's, which could
// do the same. No sandbox can make a link in the home directory or above
// it (no writable root holds the home), so a link there is the human's (a
// dotfiles repository's); a path that passes a link deeper down is masked
// only where the file it reaches is one the sandbox may read anyway,
// never in the rest of the read-deny list (the credential list,
// extra_read_deny, cordon's state): the copy shows nothing but the
// secret's own file with the values masked. The file is then opened
// where the path led, with no symlink followed (a link made since is
// refused, not followed), and must be the user's own with one name (a
// hard link would be a way in to another file).
func (ep *egressEndpoint) maskFiles(v *secrets.Vault, p ExecutionPolicy) {
	writable := everWritable(p)
	for i, f := range v.Files() {
		place, err := filepath.EvalSymlinks(f)
		if err != nil {
			continue // missing: nothing to show, and the read-deny entry holds
		}
		if len(secretFilesIn([]string{f}, writable)) > 0 {
			continue
		}
		if linkedWhereSandboxesWrite(f, p.findings().home) && pathx.WithinAny(place, p.findings().readDenyBesideSecrets) {
			continue
		}
		data, err := maskedAt(v, place)
		if err != nil {
			continue
		}
		cp := filepath.Join(ep.dir, "masked-"+strconv.Itoa(i))
		if err := os.WriteFile(cp, data, 0o644); err != nil {
			continue
		}
		if ep.masked == nil {
			ep.masked = map[string]string{}
		}
		ep.masked[place] = cp
	}
}

// linkedWhereSandboxesWrite reports whether the way to path passes a
// symlink anywhere but in home itself or a directory above it, the only
// places no sandbox of any session can have made one.
func linkedWhereSandboxesWrite(path, home string) bool {
	links, _ := linksOnTheWay(path)
	return slices.ContainsFunc(links, func(l string) bool { return home == "" || !within(home, filepath.Dir(l)) })
}

// maskedAt is how a masked copy is read: at place, no symlink
// followed on the way, the user's own file with one name.
func maskedAt(v *secrets.Vault, place string) ([]byte, error) {
	f, err := openNoSymlinks(place)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := soleOwnName(f); err != nil {
		return nil, err
	}
	return v.Masked(f)
}

// maskedWithin are the masked files beneath dir (a hidden read-deny
// directory such as ~/.config/gh, whose empty tmpfs shows them alone).
func (ep *egressEndpoint) maskedWithin(dir string) []string {
	if ep == nil {
		return nil
	}
	var in []string
	for f := range ep.masked {
		if within(f, dir) && f != dir {
			in = append(in, f)
		}
	}
	slices.Sort(in)
	return in
}

// maskedCopy is the masked copy to bind over the read-deny file path, ""
// for none.
func (ep *egressEndpoint) maskedCopy(path string) string {
	if ep == nil {
		return ""
	}
	return ep.masked[path]
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

// secretFilesIn are the files of list that lie in one of the roots, or
// whose path passes through one (a symlink or a directory on the way): a
// command there could change what the path shows.
func secretFilesIn(list, roots []string) []string {
	var in []string
	for _, f := range list {
		on := []string{f}
		if place, err := filepath.EvalSymlinks(f); err == nil {
			on = append(on, place)
		}
		links, dirs := linksOnTheWay(f)
		if slices.ContainsFunc(slices.Concat(on, links, dirs), func(x string) bool { return pathx.WithinAny(x, roots) }) {
			in = append(in, f)
		}
	}
	return in
}

// checkSecretFiles refuses a sandbox that cannot keep a secret's file
// unreadable: Landlock grants reads with writes beneath a writable root,
// so a secret's file there (or reached through one) would be readable.
func checkSecretFiles(p ExecutionPolicy) error {
	if len(p.findings().secretFilesInRoots) == 0 {
		return nil
	}
	return &UnavailableError{Reason: fmt.Sprintf("the secret file %s lies in a writable root (or is reached through one), where Landlock cannot refuse its read; move it out of the workspace and the other writable roots, or use the bwrap backend, which hides it",
		p.findings().secretFilesInRoots[0])}
}

// everWritable are the roots a command of the session may write in some
// mode: this call's, the workspace, extra_write_allow, the session tmp.
func everWritable(p ExecutionPolicy) []string {
	roots := slices.Concat(p.WritableRoots, p.RootsBeforeClient, p.ExtraWriteAllow, []string{p.WorkspaceRoot, p.TmpDir, p.OwnDir})
	return slices.DeleteFunc(roots, func(r string) bool { return r == "" })
}
