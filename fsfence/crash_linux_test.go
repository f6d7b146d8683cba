package fsfence_test

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordonhq/cordon/fsfence"
)

// Two versions of a file that differ in every byte and in length, so that
// a torn, mixed or truncated result cannot pass for either.
var (
	crashOld = bytes.Repeat([]byte("a"), 8<<20)
	crashNew = bytes.Repeat([]byte("b"), 6<<20)
)

// TestWriteSurvivesSIGKILL kills a child process with SIGKILL at random
// moments while it rewrites a large file over and over: the file always
// holds one complete version.
func TestWriteSurvivesSIGKILL(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	target := filepath.Join(dir, "big.bin")
	require.NoError(t, os.WriteFile(target, crashOld, 0o640))

	for i := range 8 {
		cmd := helperCmd(t, "writer", dir, target)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		line, err := bufio.NewReader(out).ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "ready\n", line)
		time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()

		data, err := os.ReadFile(target)
		require.NoError(t, err)
		switch {
		case bytes.Equal(data, crashOld), bytes.Equal(data, crashNew):
		default:
			t.Fatalf("round %d: torn file: %d bytes, starting %q", i, len(data), data[:min(len(data), 8)])
		}
		fi, err := os.Stat(target)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "mode kept across rewrites")
	}
	// Only a kill between naming the anonymous temporary file and the
	// rename can leave one behind, and it is recognisable as cordon's.
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() != "big.bin" {
			assert.True(t, strings.HasPrefix(e.Name(), ".cordon-") && strings.HasSuffix(e.Name(), ".tmp"), "stray file %s", e.Name())
			t.Logf("left behind by a kill: %s", e.Name())
		}
	}
}

func init() {
	helpers["writer"] = func(args []string) int {
		root, target := args[0], args[1]
		f, err := fsfence.New(fsfence.Config{WritableRoots: []string{root}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		for i := 0; ; i++ {
			data := crashNew
			if i%2 == 1 {
				data = crashOld
			}
			if _, err := f.WriteFile(target, data); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 4
			}
			if i == 0 {
				fmt.Println("ready")
			}
		}
	}
}
