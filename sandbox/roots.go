package sandbox

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/cordonhq/cordon/internal/pathx"
	"github.com/cordonhq/cordon/sandbox/internal/gitrepo"
)

// writableRoots is the one function that says where a policy may write:
// canonical, deduplicated, existing directories. The OS backends and the
// FS fence are both fed from it so that they can never disagree.
//
//   - read-only: the session tmp only;
//   - workspace-write: the workspace, the extra roots, the gitdir and
//     commondir of a linked git worktree, and the session tmp;
//   - danger-full-access: "/".
//
// A root that does not exist yet matches nothing until it exists. The
// client's roots then narrow the result (narrowByClient).
func writableRoots(p ExecutionPolicy, in *PolicyInputs) []string {
	roots, _ := narrowByClient(configuredRoots(p, in), p, in)
	return roots
}

// configuredRoots are the writable roots before the client's roots.
func configuredRoots(p ExecutionPolicy, in *PolicyInputs) []string {
	var candidates []string
	switch p.Mode {
	case DangerFullAccess:
		return []string{string(filepath.Separator)}
	case WorkspaceWrite:
		if !p.WorkspaceReadOnly {
			candidates = append(candidates, p.WorkspaceRoot)
		}
		candidates = append(candidates, p.ExtraWriteAllow...)
		candidates = append(candidates, p.OwnDir)
		candidates = append(candidates, gitrepo.LinkedWorktreeDirs(p.WorkspaceRoot, append([]string{p.TmpDir}, p.ExtraWriteAllow...), in)...)
	case ReadOnly:
	default:
		return nil
	}
	if p.TmpDir != "" {
		candidates = append(candidates, p.TmpDir)
	}
	var roots []string
	for _, c := range candidates {
		if c == "" {
			continue
		}
		canon, err := in.Canonical(c)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(canon); err != nil || !fi.IsDir() {
			continue
		}
		if !slices.Contains(roots, canon) {
			roots = append(roots, canon)
		}
	}
	return roots
}

// narrowByClient intersects the writable roots with the client's roots: a
// writable root inside a client root stays, a client root inside a
// writable root takes its place, anything else goes. The session tmp is
// cordon's own and stays. A client root can therefore never add a place
// that was not writable already.
//
// Client roots that hold none of the writable roots (the agent was started
// in another directory than the workspace, and answers roots/list with its
// own) narrow nothing: they are set aside, and setAside says so, because
// taking them at their word would leave the workspace read-only for a
// reason neither the model nor the human can see.
func narrowByClient(roots []string, p ExecutionPolicy, in *PolicyInputs) (narrowed []string, setAside bool) {
	if len(p.ClientRoots) == 0 || p.Mode == DangerFullAccess {
		return roots, false
	}
	var canonClient []string
	for _, c := range p.ClientRoots {
		if canon, err := in.Canonical(c); err == nil {
			canonClient = append(canonClient, canon)
		}
	}
	var out []string
	add := func(r string) {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	held, userRoots := false, false
	for _, r := range roots {
		if p.TmpDir != "" && r == p.TmpDir {
			add(r)
			continue
		}
		userRoots = true
		for _, c := range canonClient {
			switch {
			case within(r, c):
				add(r)
				held = true
			case within(c, r):
				add(c)
				held = true
			}
		}
	}
	if !held {
		return roots, userRoots
	}
	return out, false
}

// within reports whether path is dir or lies beneath it, comparing whole
// components (pathx.Within). It is for planning mounts and reporting;
// access decisions on files are made by the FS fence relative to
// directory handles.
func within(path, dir string) bool { return pathx.Within(path, dir) }
