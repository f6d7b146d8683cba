package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cordonhq/cordon/internal/filestamp"
	"github.com/cordonhq/cordon/internal/pathx"
	"github.com/cordonhq/cordon/internal/procwait"
)

// Git runs programs that its configuration names (core.fsmonitor on every
// `git status`, a filter driver on checkout, an alias, a credential helper)
// and reads the hooks from core.hooksPath. When such a path lies in a
// writable root, a confined command could plant code there that the
// human's own git runs later, so it is protected like .git/hooks.
//
// The configuration is read as git reads it, by git itself: `git config
// --list --show-origin --includes` in the repository gives every scope
// (system, global, local, worktree), follows includes and includeIf, and
// says which file each value came from.

// gitKeyKind says how git uses a configuration value.
type gitKeyKind int

const (
	gitKeyCommand gitKeyKind = iota // a command line git runs
	gitKeyHooks                     // the hooks directory
	gitKeyInclude                   // another configuration file
)

// gitExecKeys are the keys whose values git executes or reads code from,
// as `git config --list` prints them (section and key lower-cased,
// subsections as written). They are compiled on first use, off the
// server's start-up path.
var gitExecKeys = sync.OnceValue(func() []gitExecKey {
	return []gitExecKey{
		{regexp.MustCompile(`^core\.hookspath$`), gitKeyHooks},
		{regexp.MustCompile(`^(include|includeif\..*)\.path$`), gitKeyInclude},
		{regexp.MustCompile(`^core\.(fsmonitor|sshcommand|editor|pager|askpass|gitproxy|alternaterefscommand)$`), gitKeyCommand},
		{regexp.MustCompile(`^(sequence\.editor|diff\.external|interactive\.difffilter|uploadpack\.packobjectshook|gpg\.program|gpg\.ssh\.defaultkeycommand|credential\.helper)$`), gitKeyCommand},
		{regexp.MustCompile(`^(diff\..*\.(command|textconv)|difftool\..*\.(cmd|path)|mergetool\..*\.(cmd|path)|merge\..*\.driver)$`), gitKeyCommand},
		{regexp.MustCompile(`^(filter\..*\.(clean|smudge|process)|credential\..*\.helper|gpg\..*\.program|hook\..*\.command)$`), gitKeyCommand},
		{regexp.MustCompile(`^(alias\..*|pager\..*|submodule\..*\.update|trailer\..*\.(command|cmd)|browser\..*\.(cmd|path)|man\..*\.(cmd|path)|remote\..*\.(uploadpack|receivepack))$`), gitKeyCommand},
		// git archive's tar filters, git gui's tools, git send-email and
		// imap-send, Git LFS's transfer agents and extensions.
		{regexp.MustCompile(`^(tar\..*\.command|guitool\..*\.cmd|sendemail\.(.*\.)?(smtpserver|tocmd|cccmd|headercmd|sendmailcmd)|imap\.tunnel|lfs\.customtransfer\..*\.path|lfs\.extension\..*\.(clean|smudge))$`), gitKeyCommand},
		// A protocol allowed that git refuses by default: ext:: runs the
		// command the remote URL names on fetch, pull and push.
		{regexp.MustCompile(`^protocol\.(.*\.)?allow$`), gitKeyCommand},
	}
})

type gitExecKey struct {
	re   *regexp.Regexp
	kind gitKeyKind
}

// gitAuditKeys are keys the audit also unsets in a repository a command
// made, though they run nothing: core.worktree points git's checkouts
// anywhere (the hooks directory, the home directory), and a cookie jar that
// git saves to may be any file the user can write.
var gitAuditKeys = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(core\.worktree|http\.(.*\.)?(cookiefile|savecookies))$`)
})

func gitKeyKindOf(key string) (gitKeyKind, bool) {
	for _, k := range gitExecKeys() {
		if k.re.MatchString(key) {
			return k.kind, true
		}
	}
	return 0, false
}

// gitBooleans are the values of core.fsmonitor that select git's built-in
// daemon rather than a program.
var gitBooleans = []string{"", "true", "false", "yes", "no", "on", "off", "1", "0"}

// gitConfigPaths returns what r's configuration makes git execute or read:
// the hooks directory (and husky's parent of ".husky/_"), the paths in
// every command a key names, include targets, and the files the
// configuration came from. Paths are absolute and clean; the caller keeps
// those in writable roots.
func gitConfigPaths(r Repo, home string, in *pathx.Inputs) []string {
	entries, inputs := readGitConfig(r, home)
	for _, p := range inputs {
		in.NoteContent(p)
	}
	base := r.Worktree
	if base == "" {
		base = r.GitDir // a bare gitdir: relative paths start there
	}
	var out []string
	for _, e := range entries {
		if e.origin != "" {
			out = append(out, e.origin)
		}
		kind, ok := gitKeyKindOf(e.key)
		if !ok {
			continue
		}
		switch kind {
		case gitKeyHooks:
			dir := relativeTo(base, pathx.ExpandUser(e.value, home))
			out = append(out, dir)
			if filepath.Base(dir) == "_" {
				// husky 9 points git at .husky/_, whose scripts run the
				// user's hooks in .husky itself.
				out = append(out, filepath.Dir(dir))
			}
		case gitKeyInclude:
			from := base
			if e.origin != "" {
				from = filepath.Dir(e.origin)
			}
			out = append(out, relativeTo(from, pathx.ExpandUser(e.value, home)))
		case gitKeyCommand:
			if e.key == "core.fsmonitor" && slices.Contains(gitBooleans, strings.ToLower(e.value)) {
				continue
			}
			if strings.HasPrefix(e.key, "alias.") && !strings.HasPrefix(e.value, "!") {
				continue // a git subcommand, not a program
			}
			out = append(out, commandPaths(e.value, base, home)...)
		}
	}
	return out
}

// commandPaths returns the words of a command line that name files: those
// with a slash, resolved against base (git runs commands from the top of
// the worktree). A bare program name is looked up on PATH, whose
// directories in a writable root are protected on their own.
func commandPaths(cmd, base, home string) []string {
	cmd = strings.TrimPrefix(cmd, "!")
	words := strings.FieldsFunc(cmd, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || strings.ContainsRune(`;|&()<>'"=`+"`", r)
	})
	var out []string
	for _, w := range words {
		w = pathx.ExpandUser(w, home)
		if strings.ContainsRune(w, '/') {
			out = append(out, relativeTo(base, w))
		}
	}
	return out
}

type gitConfigEntry struct {
	origin, key, value string
}

// gitConfigTimeout bounds one `git config --list`: an include of a FIFO
// or of /dev/zero must not hang policy resolution.
const gitConfigTimeout = 3 * time.Second

// gitConfigCache keeps each repository's reading while the files it came
// from (and the ones that could join it) look the same: running git costs
// milliseconds, a few lstats microseconds.
var gitConfigCache = struct {
	sync.Mutex
	m map[string]gitConfigReading
}{m: map[string]gitConfigReading{}}

type gitConfigReading struct {
	entries []gitConfigEntry
	inputs  []string
	stamp   string
}

// readGitConfig returns r's configuration and the files it depends on.
func readGitConfig(r Repo, home string) ([]gitConfigEntry, []string) {
	key := r.Worktree + "\x00" + r.GitDir
	gitConfigCache.Lock()
	cached, ok := gitConfigCache.m[key]
	gitConfigCache.Unlock()
	if ok && stampOf(cached.inputs) == cached.stamp {
		return cached.entries, cached.inputs
	}
	inputs := gitConfigCandidates(r, home)
	candidates := len(inputs)
	before := stampOf(inputs)
	entries := runGitConfig(r)
	for _, e := range entries {
		if e.origin == "" {
			continue
		}
		if !slices.Contains(inputs, e.origin) {
			inputs = append(inputs, e.origin)
		}
		if kind, ok := gitKeyKindOf(e.key); ok && kind == gitKeyInclude {
			if t := relativeTo(filepath.Dir(e.origin), pathx.ExpandUser(e.value, home)); !slices.Contains(inputs, t) {
				inputs = append(inputs, t)
			}
		}
	}
	// Kept only if nothing changed while git read: else the next call
	// reads again.
	if stampOf(inputs[:candidates]) == before {
		gitConfigCache.Lock()
		if len(gitConfigCache.m) >= maxGitConfigCache {
			clear(gitConfigCache.m)
		}
		gitConfigCache.m[key] = gitConfigReading{entries: entries, inputs: inputs, stamp: stampOf(inputs)}
		gitConfigCache.Unlock()
	}
	return entries, inputs
}

// maxGitConfigCache bounds the cache; a tree with more repositories only
// runs git more often.
const maxGitConfigCache = 1024

// gitConfigCandidates are the files git reads configuration from whether
// or not they exist yet: a new ~/.gitconfig changes the reading.
func gitConfigCandidates(r Repo, home string) []string {
	var c []string
	if r.GitDir != "" {
		c = append(c, filepath.Join(r.CommonDir, "config"), filepath.Join(r.GitDir, "config.worktree"))
	}
	if p := os.Getenv("GIT_CONFIG_GLOBAL"); p != "" {
		c = append(c, p)
	} else if home != "" {
		c = append(c, filepath.Join(home, ".gitconfig"))
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" {
			xdg = filepath.Join(home, ".config")
		}
		c = append(c, filepath.Join(xdg, "git", "config"))
	}
	if p := os.Getenv("GIT_CONFIG_SYSTEM"); p != "" {
		c = append(c, p)
	} else {
		c = append(c, "/etc/gitconfig")
	}
	return c
}

// stampOf is what lstat says of each path: identity, size and times.
func stampOf(paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte(0)
		if fi, err := os.Lstat(p); err == nil {
			b.WriteString(filestamp.Of(fi))
		}
		b.WriteByte(1)
	}
	return b.String()
}

// gitEnvDropped are the variables that would make cordon's git read
// another repository than the human's git in that directory.
var gitEnvDropped = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE",
	"GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM"}

// runGitConfig runs git. Without git, or where git refuses the repository
// (another user's, safe.directory), there is nothing git would run there
// either, and the reading is empty.
func runGitConfig(r Repo) []gitConfigEntry {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil
	}
	args := []string{"--no-pager"}
	dir := r.Worktree
	if dir == "" {
		args = append(args, "--git-dir="+r.GitDir)
		dir = r.GitDir
	}
	args = append(args, "config", "--list", "-z", "--show-origin", "--includes")
	ctx, cancel := context.WithTimeout(context.Background(), gitConfigTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, gitPath, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(gitEnvDropped, name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var stdout bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &stdout, n: 4 << 20}
	if procwait.Run(cmd) != nil {
		return nil
	}
	return parseGitConfigList(stdout.Bytes(), dir)
}

// parseGitConfigList reads `git config --list -z --show-origin`: records
// of "ORIGIN\0KEY\nVALUE\0" (or "KEY\0" for a key without a value).
// Relative origins are relative to the directory git ran in.
func parseGitConfigList(out []byte, dir string) []gitConfigEntry {
	fields := strings.Split(string(out), "\x00")
	var entries []gitConfigEntry
	for i := 0; i+1 < len(fields); i += 2 {
		origin, kv := fields[i], fields[i+1]
		key, value, _ := strings.Cut(kv, "\n")
		e := gitConfigEntry{key: key, value: value}
		if path, ok := strings.CutPrefix(origin, "file:"); ok && path != "" {
			e.origin = relativeTo(dir, path)
		}
		entries = append(entries, e)
	}
	return entries
}

// limitedWriter keeps the first n bytes and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n <= 0 {
		return len(p), nil
	}
	keep := p
	if len(keep) > l.n {
		keep = keep[:l.n]
	}
	l.n -= len(keep)
	if _, err := l.w.Write(keep); err != nil {
		return 0, err
	}
	return len(p), nil
}

// ConfigFile runs `git config --file file args...` with git at gitPath,
// reading that file alone, as git would (no system file, the C locale).
func ConfigFile(gitPath, file string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitConfigTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, gitPath, append([]string{"config", "--file", file}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := procwait.Run(cmd); err != nil {
		return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(errOut.String()))
	}
	return out.Bytes(), nil
}

// RunsValue reports whether git would run a program (or read a file)
// because of this key and value, or whether it is one the audit unsets
// anyway (gitAuditKeys).
func RunsValue(key, value string) bool {
	if gitAuditKeys().MatchString(key) {
		return true
	}
	kind, ok := gitKeyKindOf(key)
	switch {
	case !ok:
		return false
	case kind != gitKeyCommand:
		return true
	case key == "core.fsmonitor":
		return !slices.Contains(gitBooleans, strings.ToLower(value))
	case strings.HasPrefix(key, "alias."):
		return strings.HasPrefix(value, "!")
	}
	return true
}
