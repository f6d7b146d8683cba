package tools_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
)

// BenchmarkReadFileTail reads the last 20 lines of files of 1 MiB to
// 1 GiB (text at both ends, a hole between): a tail read goes backwards
// from the end, so its time and allocations do not grow with the file.
func BenchmarkReadFileTail(b *testing.B) {
	w := newFilesWorld(b, sandbox.WorkspaceWrite)
	dir := b.TempDir()
	for _, size := range []struct {
		name  string
		bytes int64
	}{{"1MiB", 1 << 20}, {"100MiB", 100 << 20}, {"1GiB", 1 << 30}} {
		p := filepath.Join(dir, size.name+".log")
		tailFile(b, p, size.bytes, 50)
		b.Run(fmt.Sprintf("size=%s", size.name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: p, Offset: -20}); terr != nil {
					b.Fatal(terr)
				}
			}
		})
	}
}
