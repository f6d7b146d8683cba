package pathx

import (
	"path/filepath"
	"strings"
)

// ExpandHome turns a leading "~/" into the home directory. Config values
// must be absolute or start with "~/"; anything else is refused by the
// config loader before it gets here.
func ExpandHome(p, home string) string {
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return p
}

// ExpandUser turns "~/x" into HOME/x, the way git reads paths.
func ExpandUser(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return ExpandHome(p, home)
	}
	return p
}
