package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cordonhq/cordon/internal/filestamp"
	"github.com/cordonhq/cordon/internal/pathx"
	"github.com/cordonhq/cordon/internal/procwait"
)

// Git's status in a repository also looks into every populated gitlink
// of its index (a submodule, whether or not .gitmodules names it) and
// runs status there in turn, with that repository's configuration. So a
// repository a gitlink names is one the human's git uses, however deep it
// lies, and inside node_modules, where the search does not go.

// gitlinkDirs returns the directories r's index names as gitlinks (mode
// 160000), beneath r's work tree. known is false when git could not say
// (it failed, or took too long) or could not say all (a sparse index holds
// directories it did not expand): the caller must then look everywhere.
func gitlinkDirs(r Repo, in *pathx.Inputs) (dirs []string, known bool) {
	if r.Worktree == "" || r.GitDir == "" {
		return nil, true
	}
	index := filepath.Join(r.GitDir, "index")
	in.NoteContent(index)
	if _, err := os.Stat(index); err != nil {
		return nil, true // no index: no gitlinks
	}
	key := r.Worktree + "\x00" + r.GitDir
	stamp, trusted := indexStamp(r)
	gitlinkCache.Lock()
	cached, ok := gitlinkCache.m[key]
	gitlinkCache.Unlock()
	links, known := cached.links, true
	if !ok || !trusted || cached.stamp != stamp {
		links, known = listGitlinks(r)
		if known && trusted {
			gitlinkCache.Lock()
			if len(gitlinkCache.m) >= 1024 {
				gitlinkCache.m = map[string]gitlinkReading{}
			}
			gitlinkCache.m[key] = gitlinkReading{stamp: stamp, links: links}
			gitlinkCache.Unlock()
		}
	}
	for _, l := range links {
		dirs = append(dirs, filepath.Join(r.Worktree, filepath.FromSlash(l)))
	}
	return dirs, known
}

// gitlinkCache keeps each index's gitlinks while indexStamp holds: a
// monorepo's index of 100,000 entries takes git 0.1 s to list, at every
// call's audit.
var gitlinkCache = struct {
	sync.Mutex
	m map[string]gitlinkReading
}{m: map[string]gitlinkReading{}}

// GitlinkListings counts the times git was asked (tests watch the cache
// with it).
var GitlinkListings atomic.Int64

type gitlinkReading struct {
	stamp string
	links []string
}

// indexStamp identifies what git reads r's index from: the index, both
// as a name (a symlink retargeted) and as the file it leads to (changed
// in place), and every shared index file of a split index. trusted is
// false while one of them changed too recently for its change time to
// tell a later change apart (git's "racily clean" rule), and where change
// times are not known: the listing is then not kept.
func indexStamp(r Repo) (stamp string, trusted bool) {
	paths := []string{filepath.Join(r.GitDir, "index")}
	shared, _ := filepath.Glob(filepath.Join(r.GitDir, "sharedindex.*"))
	paths = append(paths, shared...)
	now := time.Now()
	trusted = true
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(p)
		for _, stat := range []func(string) (os.FileInfo, error){os.Lstat, os.Stat} {
			b.WriteByte(0)
			fi, err := stat(p)
			if err != nil {
				continue
			}
			b.WriteString(filestamp.Of(fi))
			if ct, ok := filestamp.ChangeTime(fi); !ok || now.Sub(ct) < ChangeTimeSlack {
				trusted = false
			}
		}
		b.WriteByte(1)
	}
	return b.String(), trusted
}

// listGitlinks asks git for the gitlinks of r's index. The repository may
// be a command's, and git does what a repository's configuration says
// even to list an index (a sparse index whose trees are missing makes it
// fetch them from a "promisor" remote, through whatever program that
// names): so git reads the index, and nothing else of the repository,
// from a bare repository of cordon's own (gitShell), and with --sparse
// expands nothing.
func listGitlinks(r Repo) (links []string, known bool) {
	GitlinkListings.Add(1)
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil, true // without git, no git of the human's reads it either
	}
	shell, err := gitShell(gitPath, r)
	if err != nil {
		return nil, false
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
	// git says on stderr what it could not read: the trees of a sparse
	// index's directories, which the empty shell does not have (and it
	// then lists the rest, exiting 0).
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4 << 10}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, false
	}
	if err := cmd.Start(); err != nil {
		return nil, false
	}
	// Read as it comes, keeping only gitlinks: the listing of a large
	// index has no bound, and a gitlink may come last.
	sparse := false
	br := bufio.NewReaderSize(out, 64<<10)
	for {
		rec, err := br.ReadBytes(0)
		if meta, path, ok := bytes.Cut(bytes.TrimSuffix(rec, []byte{0}), []byte{'\t'}); ok {
			switch {
			case bytes.HasPrefix(meta, []byte("160000 ")):
				links = append(links, string(path))
			case bytes.HasPrefix(meta, []byte("040000 ")):
				sparse = true // a directory the sparse index did not expand
			}
		}
		if err != nil {
			break
		}
	}
	procwait.Exit(cmd.Process, 0)
	if cmd.Wait() != nil || stderr.Len() > 0 {
		return links, false
	}
	return links, !sparse
}

// gitShell makes an empty bare repository whose configuration is
// cordon's, with r's object format (the one setting that changes how an
// index reads) and links to r's shared index files (a split index names
// one), for git to read r's index in.
func gitShell(gitPath string, r Repo) (string, error) {
	shell, err := os.MkdirTemp("", "cordon-index-")
	if err != nil {
		return "", err
	}
	config := "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
	if f, _ := ConfigFile(gitPath, filepath.Join(r.CommonDir, "config"), "--get", "extensions.objectformat"); strings.TrimSpace(string(f)) == "sha256" {
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
