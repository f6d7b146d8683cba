//go:build unix

package sandbox

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func mkfifo(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, unix.Mkfifo(path, 0o644))
}
