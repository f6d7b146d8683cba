package pathx

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWalkComponents(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "a", "b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a", "file"), nil, 0o644))
	require.NoError(t, os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "link")))
	at := func(p ...string) string { return filepath.Join(append([]string{root}, p...)...) }
	for _, c := range []struct {
		name, target string
		want         Walk
	}{
		{"exists", at("a", "b"), Walk{Steps: []Step{{at("a"), true}, {at("a", "b"), true}}}},
		{"the root itself", root, Walk{}},
		{"missing", at("a", "b", "c", "d"), Walk{Steps: []Step{{at("a"), true}, {at("a", "b"), true}}, Missing: at("a", "b", "c")}},
		{"a file ends it", at("a", "file", "x"), Walk{Steps: []Step{{at("a"), true}, {at("a", "file"), false}}}},
		{"a link ends it, unfollowed", at("link", "b"), Walk{Link: at("link")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := WalkComponents(root, c.target)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}
