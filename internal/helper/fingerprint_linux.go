package helper

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A warm sandbox's Landlock domain is built once, when its zygote starts,
// and its rules hold inodes, not names: the walk (readgrants_linux.go)
// granted the entries a directory on the way to a read-deny entry held
// then, and a writable root is the directory it was. A directory granted
// then and moved to a read-deny path since (a backup restored over
// ~/.ssh) would stay readable in the warm sandbox; a file made later, a
// workspace made again, would be refused where a cold call, building its
// rules afresh, grants it. So the zygote keeps a fingerprint of what its
// rules were built from and takes no call once it differs: cordon starts
// that call in a fresh sandbox.
//
// The rules depend on the entries of each directory the walk lists — each
// one's name and inode, read here as the walk reads them, so no timestamp
// granularity can hide a rename — and on the inode of every other path
// they name.

// landlockDeviceFiles are the device files every ruleset grants, read
// and write, and landlockRandomFiles those it grants read: what bwrap's
// fresh /dev holds. Nothing else of the host's /dev is readable: the
// user's other terminals (/dev/pts/N: what the human types, taken from
// the shell that waits for it), input devices, sound and video, shared
// memory of programs outside.
var (
	landlockDeviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}
	landlockRandomFiles = []string{"/dev/random", "/dev/urandom"}
)

// landlockDenyRead is what a ruleset grants no read beneath: the
// read-deny list, and /dev but the files above.
func landlockDenyRead(cfg Config) []string {
	return append(slices.Clone(cfg.DenyRead), "/dev")
}

// Hashing every listed directory's entries costs a warm call some
// 0.1–0.3 ms, most of the zygote's own time. A directory whose entries
// change gets a new ctime, so the zygote keeps each directory's identity
// and ctime beside the fingerprint and hashes again only once one
// differs — or while one is "racily clean", as git calls it: a ctime
// within racyWindow of when the stamps were taken, since an older kernel
// stamps ctimes from a clock that ticks only every few milliseconds (some
// file systems every second or two), and a change in the same tick as the
// stamp would keep it. (A ctime cannot be set back but by setting the
// clock.) This assumes the file system's clock, which stamps ctimes, and
// this machine's, which dates the stamps, agree to within the window: a
// network home whose server's clock runs behind by more could see a
// second change in one tick go unnoticed.

// racyWindow is how recent a ctime must be, against the time its stamp
// was taken, for the stamp not to be trusted: two seconds, the coarsest
// timestamps Linux file systems keep.
const racyWindow = 2 * time.Second

// rulesState is the fingerprint of what a zygote's rules were built from,
// with the stamps that let it skip hashing while nothing changed.
type rulesState struct {
	sum    string
	taken  int64       // Unix ns, read before the stamps
	stamps []fileStamp // the listed directories', then the named paths', in order
}

// fileStamp is a path's identity, and for a listed directory its ctime.
type fileStamp struct {
	dev, ino uint64
	ctime    int64 // ns; 0 for a path whose entries do not count
}

// rulesPaths are what a Landlock ruleset is built from: the directories
// whose entries count (sorted), and the other paths it names. They follow
// from the config alone, so a zygote works them out once.
type rulesPaths struct{ dirs, named []string }

// pathsOf is cfg's rulesPaths; none without Landlock.
func pathsOf(cfg Config) rulesPaths {
	if cfg.LandlockABI == 0 {
		return rulesPaths{}
	}
	_, onTheWay := waysTo(landlockDenyRead(cfg))
	onTheWay["/"] = true
	return rulesPaths{slices.Sorted(maps.Keys(onTheWay)), slices.Concat(cfg.Writable, []string{"/dev"}, landlockDeviceFiles, landlockRandomFiles)}
}

// takeRulesState stamps and fingerprints what p names: the stamps first,
// so that a change while the entries are hashed shows in them at the next
// check.
func takeRulesState(p rulesPaths) rulesState {
	s := rulesState{taken: time.Now().UnixNano()}
	s.stamps = p.stamps()
	s.sum = p.fingerprint()
	return s
}

// holds reports whether what p names is unchanged since s was taken, and
// refreshes s's stamps when hashing was needed to tell.
func (s *rulesState) holds(p rulesPaths) bool {
	if s.trusted(p.stamps()) {
		return true
	}
	now := takeRulesState(p)
	if now.sum != s.sum {
		return false
	}
	*s = now
	return true
}

// trusted reports whether stamps are s's own, none of them racily clean.
func (s *rulesState) trusted(stamps []fileStamp) bool {
	if !slices.Equal(stamps, s.stamps) {
		return false
	}
	for _, st := range stamps {
		if st.ctime != 0 && st.ctime >= s.taken-int64(racyWindow) {
			return false
		}
	}
	return true
}

// String is the state as the zygote is told it: the sum, the time, and
// the stamps.
func (s rulesState) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d", s.sum, s.taken)
	for _, st := range s.stamps {
		fmt.Fprintf(&b, ":%d.%d.%d", st.dev, st.ino, st.ctime)
	}
	return b.String()
}

// parseRulesState reads what String wrote.
func parseRulesState(text string) (rulesState, error) {
	parts := strings.Split(text, ":")
	if len(parts) < 2 {
		return rulesState{}, fmt.Errorf("bad rules state %q", text)
	}
	s := rulesState{sum: parts[0]}
	var err error
	if s.taken, err = strconv.ParseInt(parts[1], 10, 64); err != nil {
		return rulesState{}, fmt.Errorf("bad rules state %q: %w", text, err)
	}
	for _, p := range parts[2:] {
		var st fileStamp
		if _, err := fmt.Sscanf(p, "%d.%d.%d", &st.dev, &st.ino, &st.ctime); err != nil {
			return rulesState{}, fmt.Errorf("bad rules state %q: %w", text, err)
		}
		s.stamps = append(s.stamps, st)
	}
	return s, nil
}

// stamps stamps the paths fingerprint reads, in its order: a missing one
// stamps as zero.
func (p rulesPaths) stamps() []fileStamp {
	stamps := make([]fileStamp, 0, len(p.dirs)+len(p.named))
	for i, path := range slices.Concat(p.dirs, p.named) {
		// As fingerprint reads them: a listed directory itself, a named
		// path where it leads.
		stat := unix.Stat
		if i < len(p.dirs) {
			stat = unix.Lstat
		}
		var st unix.Stat_t
		if err := stat(path, &st); err != nil {
			stamps = append(stamps, fileStamp{})
			continue
		}
		fs := fileStamp{dev: st.Dev, ino: st.Ino}
		if i < len(p.dirs) {
			fs.ctime = st.Ctim.Nano()
		}
		stamps = append(stamps, fs)
	}
	return stamps
}

// fingerprint describes what p names; it is "" for no paths (no
// Landlock).
func (p rulesPaths) fingerprint() string {
	if len(p.dirs) == 0 {
		return ""
	}
	h := sha256.New()
	buf := make([]byte, 32<<10)
	for _, dir := range p.dirs {
		fmt.Fprintf(h, "%s\x00", dir)
		var st unix.Stat_t
		if err := unix.Lstat(dir, &st); err != nil {
			h.Write([]byte("-\n"))
			continue
		}
		fmt.Fprintf(h, "%d %d %o\n", st.Dev, st.Ino, st.Mode)
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			hashEntries(h, dir, buf)
		}
	}
	// A writable root's entries change with every file made in it: only
	// which directory it is counts.
	for _, p := range p.named {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			fmt.Fprintf(h, "%s -\n", p)
			continue
		}
		fmt.Fprintf(h, "%s %d %d\n", p, st.Dev, st.Ino)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// hashEntries adds dir's entries, each name with its inode, to h in the
// order the directory lists them (the same while it is unchanged); buf is
// room to read them in.
func hashEntries(h hash.Hash, dir string, buf []byte) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Fprintf(h, "unreadable %v\n", err)
		return
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			fmt.Fprintf(h, "unreadable %v\n", err)
			return
		}
		if n <= 0 {
			return
		}
		// struct linux_dirent64: d_ino u64, d_off s64, d_reclen u16,
		// d_type u8, d_name NUL-terminated.
		for rec := buf[:n]; len(rec) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(rec[16:18]))
			if reclen < 19 || reclen > len(rec) {
				fmt.Fprintf(h, "malformed\n")
				return
			}
			name := rec[19:reclen]
			if end := bytes.IndexByte(name, 0); end >= 0 {
				name = name[:end+1] // the padding after it is not the kernel's
			}
			h.Write(rec[0:8])   // inode
			h.Write(rec[18:19]) // type
			h.Write(name)
			rec = rec[reclen:]
		}
	}
}
