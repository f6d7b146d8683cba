package fsfence_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordonhq/cordon/fsfence"
)

// TestSymlinkSwappedBetweenCalls: a directory that was fine for one call
// is replaced by a symlink to outside before the next.
func TestSymlinkSwappedBetweenCalls(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	d := tr.p("ws/d")
	require.NoError(t, os.Mkdir(d, 0o755))
	_, err := f.WriteFile(filepath.Join(d, "first.txt"), []byte("one"))
	require.NoError(t, err)

	require.NoError(t, os.Rename(d, tr.p("ws/d-old")))
	require.NoError(t, os.Symlink(tr.outside, d))
	outsideBefore := snapshot(t, tr.outside)

	_, err = f.WriteFile(filepath.Join(d, "second.txt"), []byte("two"))
	requireDenied(t, err, fsfence.ReasonSymlinkEscape)
	_, err = f.WriteFile(filepath.Join(d, "target.txt"), []byte("two"))
	requireDenied(t, err, fsfence.ReasonSymlinkEscape)
	require.Error(t, f.MkdirAll(filepath.Join(d, "sub")))
	require.Equal(t, outsideBefore, snapshot(t, tr.outside))
}

// TestSymlinkFlipRace: a goroutine atomically exchanges a workspace
// directory with a symlink to outside, continuously, while 2000 writes go
// through it. Every write lands in the real directory or is refused;
// nothing ever lands outside.
func TestSymlinkFlipRace(t *testing.T) {
	tr := newTreeIn(t, fastTempDir(t))
	f := tr.fence(t)
	d, swap := tr.p("ws/d"), tr.p("ws/d-swap")
	require.NoError(t, os.Mkdir(d, 0o755))
	require.NoError(t, os.Symlink(tr.outside, swap))
	outsideBefore := snapshot(t, tr.outside)

	var stop atomic.Bool
	var flips atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			if unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, swap, unix.RENAME_EXCHANGE) == nil {
				flips.Add(1)
			}
			runtime.Gosched() // let writes through between flips too
		}
	})
	const n = 2000
	var written, refused int
	for i := range n {
		// Alternate between a new file and a nested new file, so both the
		// final rename and parent creation run under the flipping.
		p := filepath.Join(d, fmt.Sprintf("f%04d.txt", i))
		if i%2 == 1 {
			p = filepath.Join(d, fmt.Sprintf("sub%04d", i), "f.txt")
		}
		_, err := f.WriteFile(p, []byte("payload"))
		if err != nil {
			require.ErrorIs(t, err, fsfence.ErrDenied)
			refused++
			continue
		}
		written++
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("written=%d refused=%d flips=%d", written, refused, flips.Load())
	assert.Equal(t, n, written+refused)

	require.Equal(t, outsideBefore, snapshot(t, tr.outside), "a write landed outside the root")
	// Every successful write is in the real directory, whichever name it
	// has now.
	real := d
	if fi, err := os.Lstat(d); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		real = swap
	}
	count := 0
	for p := range snapshot(t, real) {
		if filepath.Base(p) != "." && filepath.Ext(p) == ".txt" {
			count++
		}
	}
	assert.Equal(t, written, count)
	assert.Empty(t, tempLeftovers(t, tr.base))
}
