package sandbox

import (
	"os"
	"strconv"
	"strings"
)

// mountPointsWithin lists the mount points strictly beneath roots, from
// this process's mount table: a bind mount of the home (or of a directory
// above it) inside a writable root makes the home writable through it,
// whatever the root's own identity says. An unreadable table lists none.
func mountPointsWithin(roots []string) []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	return mountPointsIn(string(b), roots)
}

// mountPointsIn reads mountinfo's fifth field, the mount point, with its
// octal escapes (\040 for a blank) undone.
func mountPointsIn(mountinfo string, roots []string) []string {
	var out []string
	for _, line := range strings.Split(mountinfo, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		for _, r := range roots {
			if mp != r && Within(mp, r) {
				out = append(out, mp)
				break
			}
		}
	}
	return out
}

func unescapeMountinfo(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
