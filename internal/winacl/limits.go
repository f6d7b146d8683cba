package winacl

import "strings"

// Unenforced rules, as they appear in status and in a confined command's
// description.
const (
	unenforcedReadDeny  = "read-deny list: a write-restricted token restricts writes only; enforced by the FS fence for the file tools only"
	unenforcedNetwork   = "network deny: not enforced (no firewall rules); confined commands can reach the network"
	unenforcedNewProt   = "protected paths that do not exist yet: can be created (NTFS cannot deny a name that does not exist; existing ones are kept read-only by deny entries); enforced by the FS fence for the file tools only"
	unenforcedWorld     = "places that grant write access to Everyone or to the logon session (world-writable directories, some named pipes and kernel objects) stay writable"
	unenforcedIsolation = "isolation from the user's other programs: their memory can be read (cordon's included), and programs that act on requests are not confined (COM servers such as Explorer, services, WSL: wsl.exe and System32\\bash.exe run the command outside this fence); this backend is a write fence, not an isolation boundary"
	unenforcedTmp       = "private /tmp: Windows has none; TEMP, TMP and TMPDIR point at the session tmp"
	unenforcedProtected = "protected paths: not enforced by the OS (no restricted token); enforced by the FS fence for the file tools only"
)

func unenforcedWrites(reason string) string {
	return "writes outside the writable roots: NOT enforced by the OS, no restricted token could be created (" + reason +
		"); commands run with the user's own token and only the FS fence keeps the boundary, for the file tools"
}

// Limits are the rules the backend leaves unenforced, worst first, for a
// detection outcome. There are always some: even with the restricted
// token, reads and the network are not restricted, so the backend's
// enforcement is partial.
func Limits(d Decision) []string {
	if d.Token != TokenRestricted {
		return []string{
			unenforcedWrites(d.Reason), unenforcedProtected, unenforcedReadDeny,
			unenforcedNetwork, unenforcedIsolation, unenforcedTmp,
		}
	}
	return []string{
		unenforcedReadDeny, unenforcedNetwork, unenforcedNewProt,
		unenforcedWorld, unenforcedIsolation, unenforcedTmp,
	}
}

// unenforced names what one confined command is not protected
// from: the same rules as Limits, but only those its policy asks for, and
// the protected paths by name.
func unenforced(d Decision, p Policy, plan aclPlan) []string {
	var un []string
	if d.Token != TokenRestricted {
		un = append(un, unenforcedWrites(d.Reason))
		if len(p.Protected) > 0 {
			un = append(un, unenforcedProtected)
		}
	}
	if len(p.ReadDeny) > 0 {
		un = append(un, unenforcedReadDeny)
	}
	if p.NetworkDeny {
		un = append(un, unenforcedNetwork)
	}
	if d.Token == TokenRestricted && len(plan.Missing) > 0 {
		un = append(un, "protected paths that do not exist yet can be created by the command (NTFS cannot deny a name that does not exist; the FS fence still refuses them for the file tools): "+strings.Join(plan.Missing, ", "))
	}
	if d.Token == TokenRestricted {
		un = append(un, unenforcedWorld)
	}
	return append(un, unenforcedIsolation)
}
