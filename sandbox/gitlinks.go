package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Git's status in a repository also looks into every populated gitlink
// of its index (a submodule, whether or not .gitmodules names it) and
// runs status there in turn, with that repository's configuration. So a
// repository a gitlink names is one the human's git uses, however deep it
// lies, and inside node_modules, where the search does not go.

// gitlinkCache keeps each index's gitlinks while the index looks the same
// (git replaces it whole, so a new stamp follows every change).
var gitlinkCache = struct {
	sync.Mutex
	m map[string]gitlinkReading
}{m: map[string]gitlinkReading{}}

type gitlinkReading struct {
	stamp string
	links []string
}

// gitlinkDirs returns the directories r's index names as gitlinks (mode
// 160000), beneath r's work tree.
func gitlinkDirs(r GitRepo, in *PolicyInputs) []string {
	if r.Worktree == "" || r.GitDir == "" {
		return nil
	}
	index := filepath.Join(r.GitDir, "index")
	in.content(index)
	if _, err := os.Lstat(index); err != nil {
		return nil
	}
	key := r.Worktree + "\x00" + index
	stamp := stampOf([]string{index})
	gitlinkCache.Lock()
	cached, ok := gitlinkCache.m[key]
	gitlinkCache.Unlock()
	links := cached.links
	if !ok || cached.stamp != stamp {
		links = listGitlinks(r)
		gitlinkCache.Lock()
		if len(gitlinkCache.m) >= 1024 {
			gitlinkCache.m = map[string]gitlinkReading{}
		}
		gitlinkCache.m[key] = gitlinkReading{stamp: stamp, links: links}
		gitlinkCache.Unlock()
	}
	dirs := make([]string, 0, len(links))
	for _, l := range links {
		dirs = append(dirs, filepath.Join(r.Worktree, filepath.FromSlash(l)))
	}
	return dirs
}

// listGitlinks asks git for the gitlinks of r's index. The repository may
// be a command's, and git does what a repository's configuration says
// even to list an index (a sparse index whose trees are missing makes it
// fetch them from a "promisor" remote, through whatever program that
// names): so git reads the index, and nothing else of the repository,
// from a bare repository of cordon's own (gitShell), and with --sparse
// expands nothing.
func listGitlinks(r GitRepo) []string {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil
	}
	shell, err := gitShell(gitPath, r)
	if err != nil {
		return nil
	}
	defer os.RemoveAll(shell)
	ctx, cancel := context.WithTimeout(context.Background(), gitConfigTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, gitPath, "--no-pager", "--git-dir="+shell, "ls-files", "--stage", "-z", "--sparse")
	cmd.Dir = shell
	cmd.WaitDelay = time.Second // a child of git's that holds its output does not hold cordon
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(gitEnvDropped, name) && !strings.HasPrefix(name, "GIT_CONFIG") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GIT_INDEX_FILE="+filepath.Join(r.GitDir, "index"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var stdout bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &stdout, n: 64 << 20}
	if cmd.Run() != nil {
		return nil
	}
	var links []string
	for rec := range bytes.SplitSeq(stdout.Bytes(), []byte{0}) {
		if meta, path, ok := bytes.Cut(rec, []byte{'\t'}); ok && bytes.HasPrefix(meta, []byte("160000 ")) {
			links = append(links, string(path))
		}
	}
	return links
}

// gitShell makes an empty bare repository whose configuration is
// cordon's, with r's object format (the one setting that changes how an
// index reads) and links to r's shared index files (a split index names
// one), for git to read r's index in.
func gitShell(gitPath string, r GitRepo) (string, error) {
	shell, err := os.MkdirTemp("", "cordon-index-")
	if err != nil {
		return "", err
	}
	config := "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
	if f, _ := gitOnFile(gitPath, filepath.Join(r.CommonDir, "config"), "--get", "extensions.objectformat"); strings.TrimSpace(string(f)) == "sha256" {
		config = "[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n"
	}
	for _, d := range []string{"objects", "refs"} {
		if err := os.Mkdir(filepath.Join(shell, d), 0o700); err != nil {
			os.RemoveAll(shell)
			return "", err
		}
	}
	for name, data := range map[string]string{"HEAD": "ref: refs/heads/main\n", "config": config} {
		if err := os.WriteFile(filepath.Join(shell, name), []byte(data), 0o600); err != nil {
			os.RemoveAll(shell)
			return "", err
		}
	}
	shared, _ := filepath.Glob(filepath.Join(r.GitDir, "sharedindex.*"))
	for _, p := range shared {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			os.Symlink(p, filepath.Join(shell, filepath.Base(p)))
		}
	}
	return shell, nil
}
