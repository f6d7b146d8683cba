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

// listGitlinks asks git for the gitlinks of r's index. The repository
// may be a command's: git reads its configuration, so nothing it could
// run is left on (core.fsmonitor: reading an index may query it).
func listGitlinks(r GitRepo) []string {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitConfigTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, gitPath, "--no-pager", "--git-dir="+r.GitDir, "--work-tree="+r.Worktree,
		"-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-c", "safe.directory=*",
		"ls-files", "--stage", "-z")
	cmd.Dir = r.Worktree
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(gitEnvDropped, name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
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
