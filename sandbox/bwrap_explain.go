package sandbox

import (
	"bytes"
	"strings"
)

// explainBwrapFailure turns the raw errors of a bwrap that cannot create
// namespaces into the cause and the fix.
func explainBwrapFailure(stderr []byte) string {
	s := string(bytes.TrimSpace(stderr))
	lower := strings.ToLower(s)
	if bwrapNamespaceFailure(lower) {
		// In a container the runtime's profile is the cause, not the
		// host's AppArmor or sysctls the advice below names.
		if h := detectContainerHints(); h.inContainer() || h.SeccompFiltered {
			return explainContainerBwrapFailure(s, h)
		}
	}
	switch {
	case strings.Contains(lower, "setting up uid map") || strings.Contains(lower, "rtm_newaddr") ||
		strings.Contains(lower, "no permissions to creat") || strings.Contains(lower, "creating new namespace failed"):
		return "bwrap cannot create user namespaces: " + s + ". " +
			"On Ubuntu ≥ 24.04 AppArmor restricts unprivileged user namespaces; load the bwrap-userns-restrict profile " +
			"(sudo apt install apparmor-profiles && sudo ln -s /usr/share/apparmor/extra-profiles/bwrap-userns-restrict /etc/apparmor.d/ && sudo apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict), " +
			"or allow them with sysctl kernel.apparmor_restrict_unprivileged_userns=0 (elsewhere: kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0)"
	}
	return s
}
