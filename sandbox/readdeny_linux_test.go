//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadDenyEntryUnreadable plants every entry of ReadDenyEntries in a
// home, with a canary in it, and proves that a confined command in
// read-only mode cannot print it, on both backends. Adding an entry to
// the table adds its case here.
func TestReadDenyEntryUnreadable(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		type planted struct{ entry, file, canary string }
		var all []planted
		for i, e := range ReadDenyEntries {
			entry := filepath.Join(f.home, filepath.FromSlash(strings.TrimSuffix(e.Path, "/")))
			file := entry
			if strings.HasSuffix(e.Path, "/") {
				file = filepath.Join(entry, "secret")
			}
			canary := fmt.Sprintf("CRED-CANARY-%03d", i)
			require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
			require.NoError(t, os.WriteFile(file, []byte(canary+"\n"), 0o600))
			all = append(all, planted{entry, file, canary})
		}
		p := f.policy(ReadOnly, NetworkAllow)
		for i, e := range ReadDenyEntries {
			pl := all[i]
			t.Run(e.Tool+" "+e.Path, func(t *testing.T) {
				host, err := os.ReadFile(pl.file)
				require.NoError(t, err)
				require.Contains(t, string(host), pl.canary, "the host reads it: the entry is planted")
				out, _ := f.sh(p, `cat "$1"; cat "$2"; grep -r . "$2"; cd "$2" && cat ./* ./.*`, pl.file, pl.entry)
				assert.NotContains(t, out, pl.canary, "a confined command printed %s (%s)", e.Path, e.Tool)
			})
		}
	})
}
