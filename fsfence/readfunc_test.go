//go:build unix

package fsfence_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordonhq/cordon/fsfence"
)

// readFunc reads name through Dir.ReadFunc, and fails the test if read
// runs for a file that is refused.
func readFunc(t *testing.T, d *fsfence.Dir, name string) (string, int64, error) {
	t.Helper()
	var data []byte
	var size int64 = -2
	err := d.ReadFunc(name, func(r io.Reader, n int64) {
		var rerr error
		data, rerr = io.ReadAll(r)
		require.NoError(t, rerr)
		size = n
	})
	if err != nil {
		require.EqualValues(t, -2, size, "read ran for %s, which was refused: %v", name, err)
		return "", 0, err
	}
	for _, s := range secrets {
		require.NotContains(t, string(data), s, "read a secret through %s/%s", d.Path(), name)
	}
	return string(data), size, nil
}

// TestDirReadFunc: ReadFunc refuses and reads exactly what OpenFile
// refuses and reads.
func TestDirReadFunc(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	require.NoError(t, os.Symlink(tr.home, tr.p("ws/homelink")))
	require.NoError(t, os.Link(tr.p("home/.netrc"), tr.p("ws/netrc-copy")))
	require.NoError(t, syscall.Mkfifo(tr.p("ws/fifo"), 0o644))
	ws := openDir(t, f, tr.ws)

	data, size, err := readFunc(t, ws, "existing.txt")
	require.NoError(t, err)
	assert.Equal(t, "old", data)
	assert.EqualValues(t, len("old"), size)

	entries, err := ws.ReadDir()
	require.NoError(t, err)
	names := []string{"missing", "", ".", "..", "sub/file.txt", "../outside", "a\x00b", ".netrc"}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	home := openDir(t, f, tr.home)
	for _, d := range []*fsfence.Dir{ws, home} {
		for _, name := range append(names, ".ssh", ".netrc", ".SSH", ".aws") {
			want, werr := readDirFile(t, d, name)
			got, _, gerr := readFunc(t, d, name)
			require.Equal(t, werr == nil, gerr == nil, "%s/%s: OpenFile %v, ReadFunc %v", d.Path(), name, werr, gerr)
			if werr != nil {
				for _, target := range []error{fsfence.ErrDenied, fsfence.ErrNotRegular, fsfence.ErrInvalidPath, fs.ErrNotExist, syscall.ELOOP} {
					assert.Equal(t, errorsIs(werr, target), errorsIs(gerr, target), "%s/%s: OpenFile %v, ReadFunc %v", d.Path(), name, werr, gerr)
				}
				continue
			}
			assert.Equal(t, want, got, "%s/%s", d.Path(), name)
		}
	}
	_, _, err = readFunc(t, ws, "netrc-copy")
	requireDenied(t, err, fsfence.ReasonReadDeny)
	_, _, err = readFunc(t, ws, "fifo") // must not block
	require.ErrorIs(t, err, fsfence.ErrNotRegular)

	ws.Close()
	_, _, err = readFunc(t, ws, "existing.txt")
	require.ErrorIs(t, err, fs.ErrClosed)
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
