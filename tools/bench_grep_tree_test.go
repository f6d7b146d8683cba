package tools_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
)

// BenchmarkGrepTree searches the tree named by CORDON_BENCH_TREE (made by
// bench/grep.sh) with cordon's grep and, side by side, with ripgrep.
func BenchmarkGrepTree(b *testing.B) {
	tree := os.Getenv("CORDON_BENCH_TREE")
	if tree == "" {
		b.Skip("set CORDON_BENCH_TREE (bench/grep.sh does)")
	}
	w := newFilesWorld(b, sandbox.WorkspaceWrite)
	b.Run("cordon", func(b *testing.B) {
		for b.Loop() {
			if _, terr := w.tb.Grep(bg, w.call, tools.GrepInput{Pattern: "needle", Path: tree, MaxResults: 10000}); terr != nil {
				b.Fatal(terr)
			}
		}
	})
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Log("rg not installed: no ripgrep comparison")
		return
	}
	b.Run("ripgrep", func(b *testing.B) {
		for b.Loop() {
			exec.Command(rg, "-n", "needle", tree).Run()
		}
	})
}
