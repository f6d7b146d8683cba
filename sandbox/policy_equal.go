package sandbox

import (
	"maps"
	"slices"
)

// Equal reports whether p and o are the same policy: every field, what
// Resolve found on the way, and the inputs it came from. A caller that
// resolves twice to check that nothing moved between (the tools' policy
// cache) compares with it. TestPolicyEqualSeesEveryField keeps it whole.
func (p ExecutionPolicy) Equal(o ExecutionPolicy) bool {
	return p.Mode == o.Mode && p.WorkspaceRoot == o.WorkspaceRoot && p.SessionID == o.SessionID &&
		p.Network == o.Network &&
		slices.Equal(p.AllowedDomains, o.AllowedDomains) && slices.Equal(p.DeniedDomains, o.DeniedDomains) &&
		p.TmpDir == o.TmpDir && slices.Equal(p.ExtraWriteAllow, o.ExtraWriteAllow) &&
		slices.Equal(p.ClientRoots, o.ClientRoots) && slices.Equal(p.WritableRoots, o.WritableRoots) &&
		p.ClientRootsSetAside == o.ClientRootsSetAside && slices.Equal(p.RootsBeforeClient, o.RootsBeforeClient) &&
		slices.Equal(p.ReadDeny, o.ReadDeny) && slices.Equal(p.Protected, o.Protected) &&
		slices.Equal(p.ProtectedNames, o.ProtectedNames) &&
		p.StateDir == o.StateDir && p.ConfigDir == o.ConfigDir && p.OwnDir == o.OwnDir &&
		slices.Equal(p.ProgramTrees, o.ProgramTrees) && p.WorkspaceReadOnly == o.WorkspaceReadOnly &&
		slices.Equal(p.Repos, o.Repos) && p.RepoScanIncomplete == o.RepoScanIncomplete &&
		p.findings().equal(o.findings()) &&
		slices.Equal(p.Inputs.Paths, o.Inputs.Paths) && slices.Equal(p.Inputs.Contents, o.Inputs.Contents) &&
		slices.Equal(p.Inputs.Trees, o.Inputs.Trees)
}

func (f *findings) equal(o *findings) bool {
	return f.repoScanWhole == o.repoScanWhole && slices.Equal(f.named, o.named) &&
		errorText(f.unconfinable) == errorText(o.unconfinable) && errorText(f.refusal) == errorText(o.refusal) &&
		maps.Equal(f.pinFloors, o.pinFloors) && maps.Equal(f.guardOnly, o.guardOnly) &&
		slices.Equal(f.readDenyLinks, o.readDenyLinks) && slices.Equal(f.readDenyDirs, o.readDenyDirs) &&
		slices.Equal(f.readDenyBesideSecrets, o.readDenyBesideSecrets) && f.home == o.home &&
		slices.Equal(f.secretFilesInRoots, o.secretFilesInRoots)
}

// errorText is err's message, "" for none: two resolutions of one policy
// make equal errors, not the same ones.
func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
