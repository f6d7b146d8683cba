package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// hostTmpPath finds the /tmp paths a command names literally.
var hostTmpPath = regexp.MustCompile(`(?:^|[\s'"=:])(/tmp/[^\s'";|&<>()$` + "`" + `]+)`)

// hostTmpNotes explains a failed command that named a path under the host's
// /tmp that the session's private /tmp does not have. A model's command is
// never given the host's /tmp (that would show other sessions' files); it
// is told why the path is missing and what to do. tmpDir is the private
// /tmp's directory on the host; "" when the command sees the host's /tmp.
func hostTmpNotes(command, tmpDir string) []string {
	if tmpDir == "" {
		return nil
	}
	var notes []string
	seen := map[string]bool{}
	for _, m := range hostTmpPath.FindAllStringSubmatch(command, -1) {
		path := filepath.Clean(m[1])
		if seen[path] || !strings.HasPrefix(path, "/tmp/") {
			continue
		}
		seen[path] = true
		if _, err := os.Lstat(filepath.Join(tmpDir, strings.TrimPrefix(path, "/tmp/"))); err == nil {
			continue
		}
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		notes = append(notes, fmt.Sprintf("[%s exists on the host's /tmp, which this sandbox does not show: /tmp here is this session's private directory. Put what the command needs in the workspace instead.]", path))
	}
	return notes
}
