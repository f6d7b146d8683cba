package fsfence_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordonhq/cordon/fsfence"
)

// benchFence builds a fence shaped like a workspace-write session's: a
// home with the default credential locations on the read-deny list (some
// existing, most not), a state directory, and the default protected names
// under the workspace. It returns the fence and a file in the workspace.
func benchFence(b *testing.B) (*fsfence.Fence, string) {
	b.Helper()
	base, err := filepath.EvalSymlinks(b.TempDir())
	require.NoError(b, err)
	home := filepath.Join(base, "home", "user")
	ws := filepath.Join(home, "src", "project")
	file := filepath.Join(ws, "pkg", "mod", "file.go")
	require.NoError(b, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(b, os.WriteFile(file, []byte("package mod\n"), 0o644))
	for _, d := range []string{".ssh", ".aws", ".config/gh", ".local/state/cordon", ".config/cordon", "src/project/.git/hooks"} {
		require.NoError(b, os.MkdirAll(filepath.Join(home, filepath.FromSlash(d)), 0o755))
	}
	require.NoError(b, os.WriteFile(filepath.Join(ws, ".git", "config"), nil, 0o644))
	var cfg fsfence.Config
	cfg.WritableRoots = []string{ws}
	for _, rel := range []string{ // sandbox.DefaultReadDeny, plus the state directory
		".ssh", ".aws", ".gnupg", ".kube", ".docker", ".config/gh",
		".config/gcloud", ".gcp", ".azure", ".netrc", ".git-credentials",
		".npmrc", ".pypirc", ".local/state/cordon",
	} {
		cfg.ReadDeny = append(cfg.ReadDeny, filepath.Join(home, filepath.FromSlash(rel)))
	}
	for _, rel := range []string{ // sandbox.DefaultProtectedNames, plus the config directory
		".git/hooks", ".git/config", ".cordon",
		".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile",
		".vscode", ".idea", ".mcp.json",
	} {
		cfg.Protected = append(cfg.Protected, filepath.Join(ws, filepath.FromSlash(rel)))
	}
	cfg.Protected = append(cfg.Protected, filepath.Join(home, ".config", "cordon"))
	f, err := fsfence.New(cfg)
	require.NoError(b, err)
	return f, file
}

// BenchmarkOpenFile is the cost of one fenced open, what grep pays for
// every file it searches.
func BenchmarkOpenFile(b *testing.B) {
	f, file := benchFence(b)
	b.ReportAllocs()
	for b.Loop() {
		fh, err := f.OpenFile(file)
		if err != nil {
			b.Fatal(err)
		}
		fh.Close()
	}
}

// BenchmarkReadDir is the cost of one fenced directory listing.
func BenchmarkReadDir(b *testing.B) {
	f, file := benchFence(b)
	dir := filepath.Dir(file)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.ReadDir(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckWrite is the cost of one write check, against the
// protected and the read-deny entries together.
func BenchmarkCheckWrite(b *testing.B) {
	f, file := benchFence(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := f.CheckWrite(file); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDirOpenFile is the cost of one open beneath a checked
// directory, what a walk pays per file instead of BenchmarkOpenFile.
func BenchmarkDirOpenFile(b *testing.B) {
	f, file := benchFence(b)
	d, err := f.OpenDir(filepath.Dir(file))
	require.NoError(b, err)
	defer d.Close()
	name := filepath.Base(file)
	b.ReportAllocs()
	for b.Loop() {
		fh, err := d.OpenFile(name)
		if err != nil {
			b.Fatal(err)
		}
		fh.Close()
	}
}

// BenchmarkDirOpenDir is the cost of entering a directory beneath a
// checked one (the entries are looked at again).
func BenchmarkDirOpenDir(b *testing.B) {
	f, file := benchFence(b)
	mod := filepath.Dir(file)
	d, err := f.OpenDir(filepath.Dir(mod))
	require.NoError(b, err)
	defer d.Close()
	b.ReportAllocs()
	for b.Loop() {
		sub, err := d.OpenDir(filepath.Base(mod))
		if err != nil {
			b.Fatal(err)
		}
		sub.Close()
	}
}
