package sandbox

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// This file generates the macOS Seatbelt (SBPL) profile. It has no build
// tag so that its golden tests run on every platform; the backend that
// runs it is in seatbelt_darwin.go.
//
// How the profile is built, and why:
//
//   - Paths never appear in the profile text. Each one is a -D KEY=VALUE
//     parameter that the profile names with (param "KEY"), so no character
//     in a path (a quote, a backslash, a newline, a parenthesis) can change
//     what the profile means, and there is no escaping to get wrong.
//   - It starts from (deny default): anything not allowed below is refused,
//     notably the Mach services through which a process can ask another,
//     unconfined one to act for it (Launch Services, Apple events, the
//     keychain).
//   - Every allow rule carries its own exceptions (require-not), so the
//     profile does not depend on how Seatbelt orders rules. The only denials
//     are narrow operations carved out of a broad allow (file-write-unlink,
//     network-outbound), the combination every Seatbelt profile in use
//     relies on.
//   - Seatbelt matches the resolved path of a file, so rules name the
//     policy's canonical paths; paths under macOS's /private symlinks
//     (/tmp, /var, /etc) are named in both spellings.
//   - Seatbelt judges a path, not the file behind it. So a protected or
//     read-denied path must not be movable (rename one of its parents,
//     change it, move it back), and hard links, which would give the same
//     file a second, unprotected name, are refused altogether.

// seatbeltExec is the only sandbox-exec cordon runs: one found on PATH
// could be anyone's.
const seatbeltExec = "/usr/bin/sandbox-exec"

// seatbeltSpec is a generated profile and the parameters it refers to.
type seatbeltSpec struct {
	Profile string
	Params  []seatbeltParam
}

// seatbeltParam is one -D KEY=VALUE definition. Keys are cordon's own
// ([A-Z0-9_]); values are paths, passed to sandbox-exec verbatim.
type seatbeltParam struct{ Key, Value string }

// args are sandbox-exec's options, to be followed by "--" and the command.
// A -D value is a whole argv element and sandbox-exec splits it at the
// first "=", which a key never contains, so a value needs no quoting.
func (s seatbeltSpec) args() []string {
	a := []string{"-p", s.Profile}
	for _, p := range s.Params {
		a = append(a, "-D"+p.Key+"="+p.Value)
	}
	return a
}

// seatbeltMDNSResponder is the socket through which macOS resolves host
// names; with the network on, the sandbox may reach it.
var seatbeltMDNSResponder = []string{"/private/var/run/mDNSResponder", "/var/run/mDNSResponder"}

// seatbeltProfile generates the profile that confines a command under p,
// with the facts the backend gathered: the call's egress proxy, and the
// Unix sockets to refuse even inside a writable root (the Docker daemon's,
// found on this machine).
//
// It refuses a danger-full-access policy (which is never confined) and a
// protected path that is, or passes through, a symlink.
func seatbeltProfile(p ExecutionPolicy, facts callFacts) (seatbeltSpec, error) {
	sockets := facts.dockerSockets
	if p.IsDanger() {
		return seatbeltSpec{}, errDangerNotConfinable
	}
	if !p.Mode.Confined() {
		return seatbeltSpec{}, fmt.Errorf("cannot build a seatbelt profile for mode %q", p.Mode)
	}
	if p.Network == NetworkRestricted && facts.egressPort() == 0 {
		return seatbeltSpec{}, invariant("network restricted without an egress proxy")
	}
	for _, list := range [][]string{p.WritableRoots, {p.TmpDir}, p.ReadDeny, p.Protected, sockets} {
		for _, path := range list {
			if err := checkSeatbeltPath(path); err != nil {
				return seatbeltSpec{}, err
			}
		}
	}
	plan, err := planMounts(p)
	if err != nil {
		return seatbeltSpec{}, err
	}
	s := newSeatbeltSets(p, plan, sockets)
	w := &sbplWriter{byPath: map[string]string{}, counts: map[string]int{}}
	w.header(p)
	w.base()
	w.reads(s)
	w.writes(s)
	w.network(p, s, facts.egressPort())
	return seatbeltSpec{Profile: w.b.String(), Params: w.params}, nil
}

// seatbeltSets are the path sets the profile is made of, worked out from
// the policy before any text is written.
type seatbeltSets struct {
	// roots are the writable roots but the session tmp; tmp is the session
	// tmp when it exists.
	roots []string
	tmp   string
	// readDeny is the read-deny list; noWrite is every path that stays
	// read-only inside a writable root: the protected paths as planMounts
	// found them (existing, or their first missing component, so that they
	// cannot be created) and the read-deny entries.
	readDeny []string
	noWrite  []string
	// pinned are the parents, inside a writable root, of noWrite entries:
	// they cannot be renamed or removed, or the entry would move with them.
	pinned []string
	// tmpParents are the parents of the session tmp that the read-deny
	// list hides (cordon's state directory): their metadata stays
	// readable, so that realpath() and getcwd() work in the session tmp.
	tmpParents []string
	// sockets are Unix sockets refused even inside a writable root.
	sockets []string
}

func newSeatbeltSets(p ExecutionPolicy, plan mountPlan, sockets []string) seatbeltSets {
	var s seatbeltSets
	for _, r := range p.WritableRoots {
		if p.TmpDir != "" && r == p.TmpDir {
			s.tmp = r
		} else {
			s.roots = appendMissing(s.roots, r)
		}
	}
	s.readDeny = appendMissing(nil, p.ReadDeny...)
	for _, x := range slices.Concat(plan.ProtectExisting, plan.ProtectMissing, plan.Rewritten, p.ReadDeny, plan.ReadDenyLinks) {
		if s.writable(x) || s.writableUnder(x) {
			s.noWrite = appendMissing(s.noWrite, x)
		}
	}
	for _, x := range s.noWrite {
		for a := filepath.Dir(x); a != filepath.Dir(a); a = filepath.Dir(a) {
			if s.writable(a) && !slices.ContainsFunc(s.noWrite, func(n string) bool { return within(a, n) }) {
				s.pinned = appendMissing(s.pinned, a)
			}
		}
	}
	if s.tmp != "" {
		for a := filepath.Dir(s.tmp); a != filepath.Dir(a); a = filepath.Dir(a) {
			if slices.ContainsFunc(s.readDeny, func(d string) bool { return within(a, d) }) {
				s.tmpParents = appendMissing(s.tmpParents, a)
			}
		}
	}
	s.sockets = appendMissing(nil, sockets...)
	return s
}

// writable reports whether path lies in a writable root (the session tmp
// included).
func (s seatbeltSets) writable(path string) bool {
	return (s.tmp != "" && within(path, s.tmp)) || slices.ContainsFunc(s.roots, func(r string) bool { return within(path, r) })
}

// writableUnder reports whether a writable root lies beneath path.
func (s seatbeltSets) writableUnder(path string) bool {
	return (s.tmp != "" && within(s.tmp, path)) || slices.ContainsFunc(s.roots, func(r string) bool { return within(r, path) })
}

// checkSeatbeltPath refuses what the policy promises never to hold: a
// relative or uncleaned path (it would match nothing, silently) or a NUL
// byte (it cannot be passed in argv).
func checkSeatbeltPath(path string) error {
	switch {
	case path == "":
		return nil
	case strings.IndexByte(path, 0) >= 0:
		return fmt.Errorf("seatbelt: path %q contains a NUL byte", path)
	case !filepath.IsAbs(path) || filepath.Clean(path) != path:
		return invariant("seatbelt: policy path %q is not absolute and clean", path)
	}
	return nil
}

func appendMissing(list []string, values ...string) []string {
	for _, v := range values {
		if v != "" && !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}

// seatbeltAlias returns the short spelling of a canonical path under one
// of macOS's /private symlinks (/private/var/x → /var/x), or "" if it has
// none. Seatbelt sees resolved paths, but naming both costs nothing and
// covers any operation that reports a path as it was given.
func seatbeltAlias(path string) string {
	for _, dir := range []string{"/tmp", "/var", "/etc"} {
		if rest, ok := strings.CutPrefix(path, "/private"+dir); ok && (rest == "" || rest[0] == '/') {
			return dir + rest
		}
	}
	return ""
}

// sbplWriter accumulates the profile text and its parameters.
type sbplWriter struct {
	b      strings.Builder
	params []seatbeltParam
	byPath map[string]string
	counts map[string]int
}

func (w *sbplWriter) line(format string, args ...any) {
	fmt.Fprintf(&w.b, format, args...)
	w.b.WriteByte('\n')
}

// param returns the key of path, defining it on first use as kind_N (or
// as kind itself when single is set).
func (w *sbplWriter) param(kind, path string, single bool) string {
	if k, ok := w.byPath[path]; ok {
		return k
	}
	k := kind
	if !single {
		k = kind + "_" + strconv.Itoa(w.counts[kind])
		w.counts[kind]++
	}
	w.define(k, path)
	return k
}

func (w *sbplWriter) define(key, path string) {
	w.byPath[path] = key
	w.params = append(w.params, seatbeltParam{Key: key, Value: path})
}

// spellings returns (param "KEY") references for path and its /private
// alias.
func (w *sbplWriter) spellings(kind, path string) []string {
	return w.spellingsOf(kind, path, false)
}

func (w *sbplWriter) spellingsOf(kind, path string, single bool) []string {
	key := w.param(kind, path, single)
	refs := []string{sbplParam(key)}
	if alias := seatbeltAlias(path); alias != "" {
		if _, ok := w.byPath[alias]; !ok {
			w.define(key+"_ALIAS", alias)
		}
		refs = append(refs, sbplParam(w.byPath[alias]))
	}
	return refs
}

func sbplParam(key string) string { return `(param "` + key + `")` }

// Filters over one path: the path itself, or the path and all beneath it.
// The literal is there as well as the subpath so that creating the path
// itself (mkdir) is matched however Seatbelt spells a new directory.
func sbplLiteral(refs []string) []string { return sbplWrap("literal", refs) }
func sbplSubpath(refs []string) []string { return sbplWrap("subpath", refs) }
func sbplTree(refs []string) []string {
	var out []string
	for _, r := range refs {
		out = append(out, "(literal "+r+")", "(subpath "+r+")")
	}
	return out
}

func sbplWrap(op string, refs []string) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = "(" + op + " " + r + ")"
	}
	return out
}

func sbplRequireNot(filters []string) []string { return sbplWrap("require-not", filters) }

// rule writes (action filter...), one filter a line, indenting filters
// that span several lines.
func (w *sbplWriter) rule(action string, filters ...string) {
	if len(filters) == 0 {
		w.line("(%s)", action)
		return
	}
	w.b.WriteString("(" + action)
	for _, f := range filters {
		w.b.WriteString("\n  " + strings.ReplaceAll(f, "\n", "\n  "))
	}
	w.line(")")
}

// sbplRequireAll joins filters into one (require-all ...) filter.
func sbplRequireAll(filters []string) string {
	if len(filters) == 1 {
		return filters[0]
	}
	return "(require-all\n  " + strings.Join(filters, "\n  ") + ")"
}

func (w *sbplWriter) header(p ExecutionPolicy) {
	w.line("(version 1)")
	network := "deny"
	if networkOn(p) {
		network = "allow"
	}
	w.line("; cordon %s, network %s. Generated: every path is a -D parameter,", p.Mode, network)
	w.line("; never spliced into this text.")
	w.line("")
	w.line("; Whatever is not allowed below is refused, Mach services included: a")
	w.line("; confined command cannot ask an unconfined process to act for it.")
	w.line("(deny default)")
}

// networkOn reports whether the policy allows the network ("" is the
// default, allow); a value it does not know denies.
func networkOn(p ExecutionPolicy) bool {
	return p.Network == NetworkAllow || p.Network == ""
}

// base allows what any command needs and can do no harm with.
func (w *sbplWriter) base() {
	w.line("")
	w.line("; Processes: run anything; see and signal only this sandbox's own.")
	w.line("(allow process-exec)")
	w.line("(allow process-fork)")
	w.line("(allow process-info* (target same-sandbox))")
	w.line("(allow signal (target same-sandbox))")
	w.line("")
	w.line("; System facts that runtimes ask for (CPUs, memory, OS version). Not")
	w.line("; kern.procargs2, which would show other processes' environments.")
	w.line("(allow mach-host*)")
	w.rule("allow sysctl-read",
		`(sysctl-name-prefix "hw.")`,
		`(sysctl-name-prefix "machdep.cpu.")`,
		`(sysctl-name "machdep.ptrauth_enabled")`,
		`(sysctl-name "kern.argmax")`,
		`(sysctl-name "kern.boottime")`,
		`(sysctl-name "kern.hostname")`,
		`(sysctl-name "kern.maxfiles")`,
		`(sysctl-name "kern.maxfilesperproc")`,
		`(sysctl-name "kern.maxproc")`,
		`(sysctl-name "kern.ngroups")`,
		`(sysctl-name "kern.osproductversion")`,
		`(sysctl-name "kern.osrelease")`,
		`(sysctl-name "kern.ostype")`,
		`(sysctl-name "kern.osvariant_status")`,
		`(sysctl-name "kern.osversion")`,
		`(sysctl-name "kern.secure_kernel")`,
		`(sysctl-name "kern.tcsm_available")`,
		`(sysctl-name "kern.tcsm_enable")`,
		`(sysctl-name "kern.usrstack64")`,
		`(sysctl-name "kern.version")`,
		`(sysctl-name-prefix "kern.proc.pgrp.")`,
		`(sysctl-name-prefix "kern.proc.pid.")`,
		`(sysctl-name "security.mac.lockdown_mode_state")`,
		`(sysctl-name "sysctl.proc_cputype")`,
		`(sysctl-name "sysctl.proc_translated")`,
		`(sysctl-name "vm.loadavg")`,
		`(sysctl-name "vm.swapusage")`)
	w.line("; Reads in disguise: the JVM's CPU probe, V8's memory-ordering switch.")
	w.rule("allow sysctl-write", `(sysctl-name "kern.grade_cputype")`, `(sysctl-name "kern.tcsm_enable")`)
	w.line("")
	w.line("; Services every program may need: user and group look-ups, preferences")
	w.line("; (read only), notifications, the per-user temp directory helper. None")
	w.line("; launches, scripts or controls another program (Launch Services, Apple")
	w.line("; events, launchd jobs), nor opens the keychain.")
	w.line("(allow user-preference-read)")
	w.rule("allow mach-lookup",
		`(global-name "com.apple.system.opendirectoryd.libinfo")`,
		`(global-name "com.apple.system.opendirectoryd.membership")`,
		`(global-name "com.apple.system.notification_center")`,
		`(global-name "com.apple.cfprefsd.daemon")`,
		`(global-name "com.apple.cfprefsd.agent")`,
		`(local-name "com.apple.cfprefsd.agent")`,
		`(global-name "com.apple.bsd.dirhelper")`)
	w.line("")
	w.line("; Local IPC: semaphores, shared memory (Python multiprocessing), and")
	w.line("; Unix socket pairs. Connecting a Unix socket is network-outbound, below.")
	w.line("(allow ipc-posix-sem)")
	w.line("(allow ipc-posix-shm)")
	w.line("(allow system-socket (socket-domain AF_UNIX))")
	w.line("")
	w.line("; Terminals: pseudo-terminals opened inside the sandbox work fully. A")
	w.line("; terminal from outside (the user's) can be read and written through")
	w.line("; /dev/tty but takes no ioctl, so nothing can be typed into it (TIOCSTI).")
	w.line("(allow pseudo-tty)")
	w.line(`(allow file-read* file-write-data file-ioctl (literal "/dev/ptmx"))`)
	w.rule("allow file-read* file-write-data file-ioctl",
		sbplRequireAll([]string{`(regex #"^/dev/ttys[0-9]+$")`, `(extension "com.apple.sandbox.pty")`}))
	w.line(`(allow file-read* file-write-data (literal "/dev/tty"))`)
	w.line("")
	w.line("; Devices any command may write: the sinks, and descriptors it already")
	w.line("; holds (/dev/fd/N, /dev/stdout), which cannot widen what it opened.")
	w.rule("allow file-write-data file-ioctl",
		`(literal "/dev/null")`, `(literal "/dev/zero")`, `(literal "/dev/dtracehelper")`)
	w.rule("allow file-ioctl", `(literal "/dev/random")`, `(literal "/dev/urandom")`)
	w.line(`(allow file-write-data (subpath "/dev/fd"))`)
}

// reads allows reading everything but the read-deny list.
func (w *sbplWriter) reads(s seatbeltSets) {
	w.line("")
	w.line("; Reads: everywhere but the read-deny list (credentials, cordon's state).")
	const read = "allow file-read* file-test-existence file-map-executable"
	if len(s.readDeny) == 0 {
		w.rule(read)
		return
	}
	var deny []string
	for _, d := range s.readDeny {
		deny = append(deny, sbplRequireNot(sbplTree(w.spellings("READ_DENY", d)))...)
	}
	filters := []string{sbplRequireAll(deny)}
	if s.tmp != "" {
		filters = append(filters, sbplSubpath(w.spellingsOf("SESSION_TMP", s.tmp, true))...)
	}
	w.rule(read, filters...)
	if len(s.tmpParents) > 0 {
		w.line("; The session tmp lies in cordon's hidden state directory: its parents")
		w.line("; can be looked at (realpath, getcwd), not listed or read.")
		var refs []string
		for _, a := range s.tmpParents {
			refs = append(refs, sbplLiteral(w.spellings("TMP_PARENT", a))...)
		}
		w.rule("allow file-read-metadata", refs...)
	}
}

// writes allows writing inside the writable roots, minus what stays
// read-only there, and pins the parents of what stays read-only.
func (w *sbplWriter) writes(s seatbeltSets) {
	w.line("")
	switch {
	case len(s.roots) == 0 && s.tmp == "":
		w.line("; Writes: none (no writable root).")
	case len(s.roots) == 0:
		w.line("; Writes: the session tmp only.")
		w.rule("allow file-write*", w.rootFilters("SESSION_TMP", s.tmp, true, s)...)
	default:
		w.line("; Writes: the writable roots, except the protected paths and the")
		w.line("; read-deny list inside them. A protected path that does not exist is")
		w.line("; named by its first missing component, so it cannot be created.")
		var filters []string
		for _, r := range s.roots {
			filters = append(filters, w.rootFilters("ROOT", r, false, s)...)
		}
		if s.tmp != "" {
			filters = append(filters, w.rootFilters("SESSION_TMP", s.tmp, true, s)...)
		}
		w.rule("allow file-write*", filters...)
	}
	if len(s.pinned) > 0 {
		w.line("; The parents of those exceptions cannot be moved or removed: a")
		w.line("; protected or hidden path would move with them, out from under the")
		w.line("; rules above, and could be changed and moved back.")
		var refs []string
		for _, a := range s.pinned {
			refs = append(refs, sbplLiteral(w.spellings("PINNED", a))...)
		}
		w.rule("deny file-write-unlink", refs...)
	}
	w.line("; Hard links: refused. Seatbelt judges a path, not the file behind it,")
	w.line("; so a second name would escape the rules on the first.")
	w.line("(deny file-link)")
}

// rootFilters is one (require-all (subpath ROOT) (require-not ...)) per
// spelling of a writable root. The session tmp is exempt from exceptions
// that contain it (it lies in cordon's state directory).
func (w *sbplWriter) rootFilters(kind, root string, isTmp bool, s seatbeltSets) []string {
	refs := w.spellingsOf(kind, root, isTmp)
	var except []string
	for _, x := range s.noWrite {
		inside := within(x, root) && x != root
		if !inside && (isTmp || !within(root, x)) {
			continue
		}
		except = append(except, sbplRequireNot(sbplTree(w.spellings(w.kindOf(x, s), x)))...)
	}
	var out []string
	for _, ref := range refs {
		out = append(out, sbplRequireAll(append([]string{"(subpath " + ref + ")"}, except...)))
	}
	return out
}

// kindOf names a read-only path's parameter after why it is read-only.
func (w *sbplWriter) kindOf(path string, s seatbeltSets) string {
	if slices.Contains(s.readDeny, path) {
		return "READ_DENY"
	}
	return "PROTECTED"
}

// network allows the network when the policy does, except Unix sockets
// that lead to a process outside the sandbox.
func (w *sbplWriter) network(p ExecutionPolicy, s seatbeltSets, egressPort int) {
	w.line("")
	if p.Network == NetworkRestricted {
		// Seatbelt names a remote by "localhost" or "*" only: the proxy's
		// port on loopback is the narrowest rule it can express.
		w.line("; Network: restricted. Out only to cordon's egress proxy on loopback;")
		w.line("; it resolves names and decides which hosts to reach.")
		w.line(`(allow network-outbound (remote ip "localhost:%d"))`, egressPort)
		return
	}
	if !networkOn(p) {
		w.line("; Network: denied. Nothing above allows it, Unix sockets included.")
		return
	}
	w.line("; Network: allowed, with what TLS and name resolution need.")
	w.line("(allow network*)")
	w.line("(allow system-socket)")
	w.rule("allow mach-lookup",
		`(global-name "com.apple.SystemConfiguration.DNSConfiguration")`,
		`(global-name "com.apple.SystemConfiguration.configd")`,
		`(global-name "com.apple.networkd")`,
		`(global-name "com.apple.trustd")`,
		`(global-name "com.apple.trustd.agent")`,
		`(global-name "com.apple.ocspd")`)
	w.line(`(allow sysctl-read (sysctl-name-prefix "net.routetable."))`)
	w.line("; But a Unix socket leads to a process that runs unconfined (tmux, an")
	w.line("; editor server, ssh-agent, Docker): only the sandbox's own sockets, in")
	w.line("; the writable roots, and the name resolver's can be connected to.")
	own := []string{`(remote unix-socket (path-regex #"^/"))`}
	var roots []string
	for _, r := range s.roots {
		roots = append(roots, w.spellings("ROOT", r)...)
	}
	if s.tmp != "" {
		roots = append(roots, w.spellingsOf("SESSION_TMP", s.tmp, true)...)
	}
	for _, ref := range roots {
		own = append(own, "(require-not (remote unix-socket (subpath "+ref+")))")
	}
	for _, m := range seatbeltMDNSResponder {
		own = append(own, `(require-not (remote unix-socket (subpath "`+m+`")))`)
	}
	w.rule("deny network-outbound", sbplRequireAll(own))
	var refuse []string
	for _, path := range slices.Concat(s.readDeny, s.sockets) {
		if !s.writable(path) && !slices.ContainsFunc(s.roots, func(r string) bool { return within(r, path) }) {
			continue // outside the writable roots: refused by the rule above
		}
		kind := "SOCKET"
		if slices.Contains(s.readDeny, path) {
			kind = "READ_DENY"
		}
		for _, ref := range w.spellings(kind, path) {
			f := "(remote unix-socket (subpath " + ref + "))"
			if s.tmp != "" && within(s.tmp, path) {
				// cordon's state directory: the session tmp in it stays usable.
				var except []string
				for _, t := range w.spellingsOf("SESSION_TMP", s.tmp, true) {
					except = append(except, "(require-not (remote unix-socket (subpath "+t+")))")
				}
				f = sbplRequireAll(append([]string{f}, except...))
			}
			refuse = append(refuse, f)
		}
	}
	if len(refuse) > 0 {
		w.line("; Nor, even inside a writable root, the sockets of credential stores")
		w.line("; (gpg-agent, Docker Desktop in ~/.docker), of a Docker daemon, or of")
		w.line("; cordon itself.")
		w.rule("deny network-outbound", refuse...)
	}
}

// seatbeltDenialSignatures are what a command's output holds when Seatbelt
// refused it: the EPERM that every refused file or socket operation
// returns, and the kernel's own report ("Sandbox: sh(42) deny(1)
// file-write-create /x"), which a command reading the system log may echo.
var seatbeltDenialSignatures = []string{"Operation not permitted", "deny(1) file-", "deny(1) network-"}

// seatbeltRunnerRules tell sandbox-exec's own failures from the command's.
// sandbox-exec reports on stderr with a "sandbox-exec: " prefix and exits
// 65 (EX_DATAERR) when it rejects the profile ("sandbox-exec: unbound
// variable: … at <input string>, line 5"), and 71 (EX_OSERR) when it
// cannot apply the sandbox ("sandbox-exec: sandbox_apply: Operation not
// permitted", as when cordon itself runs inside a sandbox: they do not
// nest) or cannot start the command ("execvp() of 'x' failed").
var seatbeltRunnerRules = []RunnerFailureRule{
	{AllowedExitCodes: []int{65}, FatalSignatures: []string{"sandbox-exec: "}},
	{AllowedExitCodes: []int{71}, FatalSignatures: []string{"sandbox-exec: sandbox_apply", "execvp() of '"}},
}

// seatbeltUnenforced names what Seatbelt cannot do of a policy: it filters
// operations on the real file system and cannot lay a private /tmp over
// the host's.
var seatbeltUnenforced = []string{
	"private /tmp: the host's /tmp stays readable (not writable); TMPDIR points at the session tmp instead",
}
