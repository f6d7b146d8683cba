package fsfence

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLineageCacheKeys: a lineage is found again only under the directory
// and mount it was walked under; without a unique mount id (a kernel
// before 6.8) nothing is kept; and a cache full in entries or bytes
// starts afresh.
func TestLineageCacheKeys(t *testing.T) {
	var c lineageCache
	ids := []fileID{{1, 2}, {1, 1}}
	c.put(lineageKey{"/w/a", 7}, ids)
	got, ok := c.get(lineageKey{"/w/a", 7})
	require.True(t, ok)
	assert.Equal(t, ids, got)
	for _, k := range []lineageKey{{"/w/a", 8}, {"/w/b", 7}, {"/w", 7}} {
		_, ok := c.get(k)
		assert.False(t, ok, "%v", k)
	}

	c.put(lineageKey{"/w/c", 0}, ids)
	_, ok = c.get(lineageKey{"/w/c", 0})
	assert.False(t, ok, "no mount id: nothing cached")

	for i := range maxCachedLineages {
		c.put(lineageKey{"/many", uint64(i + 100)}, ids)
	}
	assert.LessOrEqual(t, len(c.byDir), maxCachedLineages)
	_, ok = c.get(lineageKey{"/w/a", 7})
	assert.False(t, ok, "a full cache started afresh")

	deep := make([]fileID, 4096) // 64 KB a lineage
	for i := range 100 {
		c.put(lineageKey{"/deep", uint64(i + 1)}, deep)
		assert.LessOrEqual(t, c.size, maxCachedLineageBytes)
	}
}
