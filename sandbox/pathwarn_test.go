//go:build !windows

package sandbox

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRelativePathEntriesNamed: every entry of PATH that is not absolute
// is warned about by name, an empty one too; absolute ones are not.
func TestRelativePathEntriesNamed(t *testing.T) {
	path := strings.Join([]string{"./node_modules/.bin", "/usr/bin", "bin", "", "/bin"}, ":")
	assert.Equal(t, []string{"./node_modules/.bin", "bin", ""}, RelativePathEntries(path))
	warns := PathWarnings(path)
	if assert.Len(t, warns, 3) {
		assert.Contains(t, warns[0], `"./node_modules/.bin"`)
		assert.Contains(t, warns[0], "node_modules/.bin/git")
		assert.Contains(t, warns[1], `"bin"`)
		assert.Contains(t, warns[2], "empty entry")
	}
	assert.Empty(t, PathWarnings("/usr/local/bin:/usr/bin:/bin"))
}
