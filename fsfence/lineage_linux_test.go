package fsfence_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordonhq/cordon/fsfence"
)

// lineageByHandles is the walk lineage replaced: open "..", stat it, and
// go on from the opened handle, one ancestor at a time.
func lineageByHandles(path string) ([][2]uint64, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	var ids [][2]uint64
	for {
		var st unix.Stat_t
		err := unix.Fstat(fd, &st)
		if err == nil {
			id := [2]uint64{uint64(st.Dev), st.Ino} //nolint:unconvert // Dev is 32-bit on some ports
			if len(ids) > 0 && ids[len(ids)-1] == id {
				unix.Close(fd)
				return ids, nil
			}
			ids = append(ids, id)
		}
		up, oerr := unix.Openat(fd, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil || oerr != nil {
			return nil, fmt.Errorf("%v %v", err, oerr)
		}
		fd = up
	}
}

// TestLineageClimbsEveryLevel: lineage names the same ancestors as a walk
// of opened handles, past the levels it climbs by one ".." path.
func TestLineageClimbsEveryLevel(t *testing.T) {
	dir := t.TempDir()
	for i := range 3*32 + 5 {
		dir = filepath.Join(dir, fmt.Sprintf("d%d", i))
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	got, err := fsfence.Lineage(dir)
	require.NoError(t, err)
	want, err := lineageByHandles(dir)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Greater(t, len(got), 3*32+5)
}

// TestLineageCrossesMounts: a directory mounted inside a read-deny
// directory has that directory among its ancestors, as the kernel's ".."
// sees it, although the mounted tree itself lies elsewhere.
func TestLineageCrossesMounts(t *testing.T) {
	base := fastTempDir(t)
	for _, d := range []string{"deny/mnt", "elsewhere/tree/sub"} {
		require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	out := inMountNamespace(t, "lineage-mount", base)
	assert.Equal(t, "same as the handle walk\nthe read-deny directory is an ancestor\n", out)
}

func init() {
	helpers["lineage-mount"] = func(args []string) int {
		base := args[0]
		fail := func(err error) int { fmt.Fprintln(os.Stderr, err); return 3 }
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fail(err)
		}
		if err := unix.Mount(filepath.Join(base, "elsewhere/tree"), filepath.Join(base, "deny/mnt"), "", unix.MS_BIND, ""); err != nil {
			return fail(err)
		}
		var deny unix.Stat_t
		if err := unix.Stat(filepath.Join(base, "deny"), &deny); err != nil {
			return fail(err)
		}
		dir := filepath.Join(base, "deny/mnt/sub")
		got, err := fsfence.Lineage(dir)
		if err != nil {
			return fail(err)
		}
		want, err := lineageByHandles(dir)
		if err != nil {
			return fail(err)
		}
		if fmt.Sprint(got) == fmt.Sprint(want) {
			fmt.Println("same as the handle walk")
		} else {
			fmt.Printf("differs: %v, handles %v\n", got, want)
		}
		if slices.Contains(got, [2]uint64{uint64(deny.Dev), deny.Ino}) { //nolint:unconvert // Dev is 32-bit on some ports
			fmt.Println("the read-deny directory is an ancestor")
		}
		return 0
	}
}
