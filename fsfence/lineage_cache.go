package fsfence

import (
	"slices"
	"sync"
	"unsafe"
)

// lineageCache remembers, for one matcher, the identities of a directory
// and of its ancestors by the directory's kernel path and mount, so that a
// path check of a file does not walk ".." to the root again for every file
// of a directory it has seen (four to a dozen system calls a file, most of
// what a check of a file cost).
//
// Why a lineage found by path stays good for as long as the matcher does:
// the lineage is compared with the matcher's identities only, and those
// are the objects its entries resolved to, which sit at their entries'
// paths for as long as the matcher is current (a change on the way to an
// entry makes the entry cache resolve afresh, into a new matcher with an
// empty lineageCache). Suppose a denied directory S is an ancestor of the
// directory now at path P. Then S is the directory at some prefix of P,
// reached through the mounts that lead to P. The key holds the unique id
// of the innermost mount of the checked object: a mount made since on any
// prefix of P would hide that one, so the same id means the same chain of
// mounts down to it (a mount moved with MS_MOVE keeps its id, but moving
// one, like making one, takes privileges no confined command holds). Through the same mounts, the same prefix reaches what
// sits at the same place in the tree, and S has sat at its entry's place
// throughout (directories have no hard links, so no other place holds it):
// the prefix reached S when the lineage was walked too, and the walk
// recorded it. A directory since moved away from P, or deleted and its
// inode reused, changes nothing in that: what counts is what sits on the
// path. So nothing in the cache can hide an entry; at worst it could
// recall one that no longer sits there, and the matcher is rebuilt before
// that can happen. A kernel without unique mount ids (before Linux 6.8)
// caches nothing.
type lineageCache struct {
	mu    sync.Mutex
	byDir map[lineageKey][]fileID
	size  int // bytes held, roughly
}

// lineageKey is a directory's kernel path and the unique id of the mount
// of the object checked beneath or at it.
type lineageKey struct {
	dir   string
	mount uint64
}

// The cache is bounded in entries and in bytes (a path may be 4 KB long,
// a lineage thousands of directories deep; there is one cache per fence
// and list): past either bound it starts afresh.
const (
	maxCachedLineages     = 1024
	maxCachedLineageBytes = 1 << 20
)

// get returns the lineage last recorded under k, the directory itself
// first. Mount 0 (no unique id) is never cached.
func (c *lineageCache) get(k lineageKey) ([]fileID, bool) {
	if k.mount == 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ids, ok := c.byDir[k]
	return ids, ok
}

// put records the lineage just walked from the directory of k.
func (c *lineageCache) put(k lineageKey, ids []fileID) {
	if k.mount == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(k.dir) + len(ids)*int(unsafe.Sizeof(fileID{}))
	if c.byDir == nil || len(c.byDir) >= maxCachedLineages || c.size+n > maxCachedLineageBytes {
		c.byDir, c.size = make(map[lineageKey][]fileID), 0
	}
	c.byDir[k] = slices.Clip(ids) // an append by a caller copies
	c.size += n
}
