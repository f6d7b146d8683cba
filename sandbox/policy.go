package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/cordonhq/cordon/internal/pathx"
	"github.com/cordonhq/cordon/sandbox/internal/gitrepo"
)

// Settings are the deployment's defaults: the config files, then the flags.
type Settings struct {
	Mode    Mode
	Network Network
	// AllowedDomains and DeniedDomains are network restricted's lists
	// (deny wins).
	AllowedDomains, DeniedDomains []string
	// Workspace is the session's working directory (--workspace, else the
	// process's cwd). FallbackRoot serves sessions that have none.
	Workspace    string
	FallbackRoot string
	// ExtraWriteAllow and ExtraReadDeny are absolute paths ("~/" already
	// expanded); ProtectedNames are relative to each writable root.
	ExtraWriteAllow []string
	ExtraReadDeny   []string
	ProtectedNames  []string
	Home            string
	StateDir        string
	ConfigDir       string
	// OwnDir is a directory of cordon's state that the command owns and
	// may write (a `cordon wrap` class's <state-dir>/wrap/NAME): writable,
	// and visible through the hidden state directory.
	OwnDir string
	// WorkspaceReadOnly keeps the workspace readable, not writable, in
	// workspace-write: the other writable roots (OwnDir, ExtraWriteAllow)
	// are where the command writes (a wrapped server's default).
	WorkspaceReadOnly bool
	// ProgramTrees are the directories under the host's /tmp that a
	// human-typed command runs from (see ProgramTrees): visible read-only
	// over the private /tmp.
	ProgramTrees []string
	// SecretFiles are the files that hold a secret's value ([secrets.NAME]
	// files, absolute): read-deny entries that Landlock must be able to
	// refuse, and that bwrap shows masked (secrets.go).
	SecretFiles []string
}

// ExecutionPolicy is the single resolved answer to "what may this call
// touch", shared by the shell and the file tools so they cannot drift.
type ExecutionPolicy struct {
	Mode          Mode
	WorkspaceRoot string
	SessionID     string
	Network       Network
	// AllowedDomains and DeniedDomains are what the egress proxy of a
	// network-restricted call lets through and refuses; a caller may add
	// the hosts the human allowed for the session.
	AllowedDomains, DeniedDomains []string
	// TmpDir is the session's private tmp directory on the host.
	TmpDir          string
	ExtraWriteAllow []string
	// ClientRoots, when set, are the MCP client's roots: they may only
	// narrow the writable roots, never widen or replace them.
	ClientRoots []string
	// WritableRoots is WritableRoots(policy), computed once by Resolve.
	WritableRoots []string
	// ClientRootsSetAside says the client's roots held none of the
	// writable roots and so narrowed nothing (SPEC: client roots).
	ClientRootsSetAside bool
	// RootsBeforeClient, set only when the client's roots did narrow, are
	// the writable roots they narrowed: a denial of a path in these but not
	// in WritableRoots is the client's doing, which no mode widens.
	RootsBeforeClient []string
	// ReadDeny and Protected are absolute paths (canonical where they exist).
	ReadDeny  []string
	Protected []string
	// ProtectedNames are the root-relative names behind Protected, and
	// StateDir/ConfigDir are cordon's own, which are always protected.
	ProtectedNames []string
	StateDir       string
	ConfigDir      string
	// OwnDir is Settings.OwnDir, canonical: a writable root.
	OwnDir string
	// ProgramTrees is Settings.ProgramTrees, canonical.
	ProgramTrees []string
	// WorkspaceReadOnly is Settings.WorkspaceReadOnly.
	WorkspaceReadOnly bool
	// Repos are the git repositories found beneath the writable roots
	// (workspace-write only): their git paths are in Protected, and a
	// repository that appears during a command is audited after it (the
	// guard's audit, sandbox/internal/guard). RepoScanIncomplete says the
	// search stopped early, even past its usual bound.
	Repos              []gitrepo.Repo
	RepoScanIncomplete bool
	// found is what Resolve found on the way, which the backends and the
	// guard plan with (see findings); nil in a policy not made by Resolve.
	found *findings
	// Inputs are the paths Resolve derived this policy from: a caller may
	// keep the policy while none of them changes (see PolicyInputs).
	Inputs PolicyInputs
}

// findings are what Resolve found on the way to a policy that the policy
// itself does not say, but the backends and the guard plan with: the
// protected names met, the mount hints, why the policy cannot be confined
// or may not run at all. Resolve fills them once; every copy of the policy
// shares them and nothing changes them after.
type findings struct {
	// repoScanWhole says the search for repositories went past its usual
	// bound (ExecutionPolicy.RepoScanIncomplete).
	repoScanWhole bool
	// named are the protected names the same search met beneath the
	// writable roots, at any depth it reaches: in Protected too, and what
	// the guard's audit knows were there before a command.
	named []gitrepo.NamedPath
	// unconfinable, when set, is why no backend may confine this policy
	// (a .git that is a symlink); the file tools still work.
	unconfinable error
	// refusal, when set, is why this policy may not run at all, on any
	// backend or through the file tools that write: a writable root holds
	// the home directory (homerule.go).
	refusal error
	// pinFloors maps the protected paths of nested repositories to their
	// worktree: a mount-based backend pins the directories between the
	// worktree and the path, not those above it, so that a directory
	// holding a nested clone can still be moved or removed (a gitdir
	// replaced by a new one is audited after the command instead).
	pinFloors map[string]string
	// guardOnly are protected paths that git itself rewrites unchanged
	// (a submodule's config): guarded, never bound read-only.
	guardOnly map[string]bool
	// readDenyLinks are the symlinks in the writable roots on the way to
	// read-deny entries: guarded and pinned, so that no command points
	// them elsewhere (readdeny_links.go).
	readDenyLinks []string
	// readDenyDirs are the directories in the writable roots on the way to
	// those entries: pinned, for the same reason.
	readDenyDirs []string
	// readDenyBesideSecrets is the read-deny list but for the secrets'
	// files, and home Settings.Home, canonical: a secret's path that a
	// symlink below home leads into that list is hidden, never masked
	// (secrets.go).
	readDenyBesideSecrets []string
	home                  string
	// secretFilesInRoots are the secret files in a writable root, or
	// reached through one: Landlock cannot refuse their read (secrets.go).
	secretFilesInRoots []string
}

// findings are the policy's, or none for a policy built by hand.
func (p ExecutionPolicy) findings() *findings {
	if p.found == nil {
		return &findings{}
	}
	return p.found
}

// IsDanger reports whether the policy runs commands unconfined.
func (p ExecutionPolicy) IsDanger() bool { return p.Mode == DangerFullAccess }

// errDangerNotConfinable is returned by ToConfined for a danger policy.
var errDangerNotConfinable = errors.New("a danger-full-access policy cannot be confined: it runs unconfined by definition")

// ConfinedPolicy is an ExecutionPolicy proved to be confinable. Backends
// accept only this type, so a danger policy can never reach one by
// accident, and there is no way back to an unconfined policy.
type ConfinedPolicy struct {
	p ExecutionPolicy
	// egress is the call's running proxy under network restricted, started
	// by Executor.prepare: the call's, not the policy's.
	egress *egressEndpoint
}

// ToConfined converts a read-only or workspace-write policy for a backend.
// Anything else is a programming error and fails closed.
func (p ExecutionPolicy) ToConfined() (ConfinedPolicy, error) {
	if p.IsDanger() {
		return ConfinedPolicy{}, errDangerNotConfinable
	}
	if !p.Mode.Confined() {
		return ConfinedPolicy{}, fmt.Errorf("cannot confine unknown mode %q", p.Mode)
	}
	if p.findings().refusal != nil {
		return ConfinedPolicy{}, p.findings().refusal
	}
	if p.Mode == ReadOnly {
		for _, r := range p.WritableRoots {
			if r != p.TmpDir && !(p.TmpDir != "" && within(r, p.TmpDir)) {
				if err := invariant("read-only policy has writable root %q", r); err != nil {
					return ConfinedPolicy{}, err
				}
			}
		}
	}
	return ConfinedPolicy{p: p}, nil
}

// Refusal is why no command and no file-tool write may run under this
// policy (an *UnavailableError), or nil: a writable root holds the home
// directory. Reads are unaffected.
func (p ExecutionPolicy) Refusal() error { return p.findings().refusal }

// Policy returns the policy being confined.
func (c ConfinedPolicy) Policy() ExecutionPolicy { return c.p }

// PolicyService resolves the effective policy of one call. The shell and
// the file tools both call Resolve, and nothing else computes a policy.
type PolicyService struct {
	Settings Settings
}

// Request carries what a single call adds to the deployment's settings.
type Request struct {
	SessionID string
	// Workspace is the session's own working directory, if it has one.
	Workspace string
	// Override is the mode of an approved escalation for this one call.
	Override Mode
	// SessionMode is the mode the session's log puts in force (its last
	// sandbox/mode event), or "" when it has none: the caller reads the
	// log, so that resolution never calls back into it.
	SessionMode Mode
	TmpDir      string
	// ClientRoots are the client's declared roots (absolute paths).
	ClientRoots []string
}

// Resolve applies the three layers, highest first: the explicit override
// (an approved escalation), the session's last sandbox/mode event, the
// deployment default. The workspace is the session's, else the settings',
// else the fallback root.
func (s *PolicyService) Resolve(req Request) (ExecutionPolicy, error) {
	set := s.Settings
	mode := s.ModeFor(req)
	if !mode.Valid() {
		return ExecutionPolicy{}, fmt.Errorf("invalid sandbox mode %q", mode)
	}
	workspace := firstNonEmpty(req.Workspace, set.Workspace, set.FallbackRoot)
	if workspace == "" {
		return ExecutionPolicy{}, errors.New("no workspace: give --workspace or configure fallback_root")
	}
	var in PolicyInputs
	root, err := in.Canonical(workspace)
	if err != nil {
		return ExecutionPolicy{}, fmt.Errorf("workspace %q: %w", workspace, err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return ExecutionPolicy{}, fmt.Errorf("workspace %q is not a directory", workspace)
	}
	network := set.Network
	if network == "" {
		network = NetworkAllow
	}
	p := ExecutionPolicy{
		Mode:            mode,
		WorkspaceRoot:   root,
		SessionID:       req.SessionID,
		Network:         network,
		AllowedDomains:  slices.Clone(set.AllowedDomains),
		DeniedDomains:   slices.Clone(set.DeniedDomains),
		TmpDir:          req.TmpDir,
		ExtraWriteAllow: set.ExtraWriteAllow,
		ProtectedNames:  append(slices.Clone(DefaultProtectedNames), set.ProtectedNames...),
		StateDir:        set.StateDir,
		ConfigDir:       set.ConfigDir,
		ClientRoots:     req.ClientRoots,
		// Only beside another writable root: alone it would be read-only.
		WorkspaceReadOnly: set.WorkspaceReadOnly && set.OwnDir != "",
	}
	found := &findings{}
	p.found = found
	if set.OwnDir != "" {
		if p.OwnDir, err = in.Canonical(set.OwnDir); err != nil {
			return ExecutionPolicy{}, fmt.Errorf("own directory: %w", err)
		}
	}
	for _, t := range set.ProgramTrees {
		c, err := in.Canonical(t)
		if err != nil {
			return ExecutionPolicy{}, fmt.Errorf("program directory: %w", err)
		}
		p.ProgramTrees = append(p.ProgramTrees, c)
	}
	if p.TmpDir != "" {
		if p.TmpDir, err = in.Canonical(p.TmpDir); err != nil {
			return ExecutionPolicy{}, fmt.Errorf("session tmp: %w", err)
		}
	}
	configured := configuredRoots(p, &in)
	p.WritableRoots, p.ClientRootsSetAside = narrowByClient(configured, p, &in)
	if !slices.Equal(configured, p.WritableRoots) {
		p.RootsBeforeClient = configured
	}
	found.refusal = homeRule(p, set.Home)
	var links, dirs []string
	p.ReadDeny, links, dirs = readDenyList(set, p.WritableRoots, &in)
	for _, l := range links {
		if pathx.WithinAny(l, userRoots(p)) {
			found.readDenyLinks = append(found.readDenyLinks, l)
		}
	}
	for _, d := range dirs {
		if pathx.WithinAny(d, userRoots(p)) {
			found.readDenyDirs = append(found.readDenyDirs, d)
		}
	}
	found.secretFilesInRoots = secretFilesIn(set.SecretFiles, p.WritableRoots)
	if len(set.SecretFiles) > 0 {
		beside := set
		beside.SecretFiles = nil
		found.readDenyBesideSecrets, _, _ = readDenyList(beside, p.WritableRoots, nil)
		found.home = pathx.CanonicalOrClean(set.Home)
	}
	if p.Mode == WorkspaceWrite {
		search, err := gitrepo.FindWithNames(userRoots(p), p.ProtectedNames, &in)
		if err != nil {
			// A .git symlink is a protected path that is a symlink, and
			// refused as every backend refuses one.
			err = fmt.Errorf("%w: %w", errProtectedSymlink, err)
		}
		p.Repos, found.named, p.RepoScanIncomplete, found.repoScanWhole, found.unconfinable = search.Repos, search.Named, search.Incomplete, search.Whole, err
		if search.Incomplete && err == nil {
			// Past even the whole search's bound, repositories and
			// protected names go unseen: fail closed rather than run
			// commands that could arm them.
			found.unconfinable = fmt.Errorf("%w: more than %d directories beneath the writable roots (outside node_modules); run cordon on a smaller workspace, or in read-only mode", gitrepo.ErrTooLarge, gitrepo.MaxDirs)
		}
	}
	p.Protected, found.pinFloors, found.guardOnly = protectedList(p, set, p.Repos, &in)
	in.Finish()
	p.Inputs = in
	return p, nil
}

// ModeFor is the mode a request resolves to: its override, else the
// session's, else the deployment's.
func (s *PolicyService) ModeFor(req Request) Mode {
	if req.Override != "" {
		return req.Override
	}
	if req.SessionMode != "" {
		return req.SessionMode
	}
	return s.Settings.Mode
}

// readDenyList returns the read-deny list: every place each entry leads
// to now or has led to in this process (readdeny_links.go), and the
// symlinks and directories met on the way to an entry that a symlink
// leads elsewhere.
func readDenyList(set Settings, roots []string, in *PolicyInputs) (list, links, dirs []string) {
	add := func(p string) {
		if p == "" {
			return
		}
		entry := filepath.Clean(p)
		place := in.CanonicalOrClean(p)
		for _, c := range placesOf(entry, place, roots) {
			if !slices.Contains(list, c) {
				list = append(list, c)
			}
		}
		if place == entry {
			return // no symlink on the way
		}
		ls, ds := linksOnTheWay(entry)
		for _, l := range ls {
			if !slices.Contains(links, l) {
				links = append(links, l)
			}
		}
		for _, d := range ds {
			if !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	if set.Home != "" {
		for _, rel := range DefaultReadDeny {
			add(filepath.Join(set.Home, filepath.FromSlash(rel)))
		}
	}
	add(set.StateDir)
	for _, p := range slices.Concat(set.ExtraReadDeny, set.SecretFiles) {
		add(p)
	}
	return list, links, dirs
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// GitDirs are the gitdirs of the policy's repositories, which the file
// tools never write, whatever their names: a bare repository's, or
// one that a .git file points to, holds what git runs and the state of an
// unfinished rebase as much as a .git does (the guard sets aside such state
// that a command leaves; a file tool's write would have come in between).
func (p ExecutionPolicy) GitDirs() []string {
	var dirs []string
	for _, r := range p.Repos {
		for _, d := range []string{r.GitDir, r.CommonDir} {
			if d != "" && !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}
