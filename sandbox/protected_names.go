package sandbox

import (
	_ "embed"
	"fmt"
	"path"
	"strings"
)

// protectedNamesData is the list of protected names, one a line with the
// tool it belongs to (protected_names.txt).
//
//go:embed protected_names.txt
var protectedNamesData string

// ProtectedName is one entry of the list: a slash-separated path relative
// to the directory holding it, and the tool that loads it.
type ProtectedName struct {
	Name, Tool string
}

// ProtectedNameList is the parsed list, in the file's order.
var ProtectedNameList = mustParseProtectedNames(protectedNamesData)

// DefaultProtectedNames are the names of ProtectedNameList: the paths that
// stay read-only even in workspace-write wherever they lie beneath a
// writable root (protected.go). Git's own paths are not listed: they come
// from the repositories actually found (package gitrepo), read as git reads
// them.
var DefaultProtectedNames = func() []string {
	names := make([]string, len(ProtectedNameList))
	for i, e := range ProtectedNameList {
		names[i] = e.Name
	}
	return names
}()

// protectedNameTools names the tool each protected name belongs to, for
// what the audit says when it sets one aside.
var protectedNameTools = func() map[string]string {
	tools := make(map[string]string, len(ProtectedNameList))
	for _, e := range ProtectedNameList {
		tools[e.Name] = e.Tool
	}
	return tools
}()

func mustParseProtectedNames(data string) []ProtectedName {
	list, err := parseProtectedNames(data)
	if err != nil {
		panic(err)
	}
	return list
}

// parseProtectedNames reads "NAME  TOOL" lines; blank lines and lines
// starting with # are skipped. A name is a clean relative path that does
// not leave its directory.
func parseProtectedNames(data string) ([]ProtectedName, error) {
	var list []ProtectedName
	seen := map[string]bool{}
	for i, line := range strings.Split(data, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, tool, _ := strings.Cut(line, " ")
		if j := strings.IndexAny(name, "\t"); j >= 0 {
			name, tool = name[:j], name[j+1:]+" "+tool
		}
		tool = strings.TrimSpace(tool)
		switch {
		case tool == "":
			return nil, fmt.Errorf("protected_names.txt:%d: %q names no tool", i+1, name)
		case name != path.Clean(name) || path.IsAbs(name) || name == "." || name == ".." || strings.HasPrefix(name, "../") || strings.Contains(name, "\\"):
			return nil, fmt.Errorf("protected_names.txt:%d: %q is not a clean relative path", i+1, name)
		case seen[name]:
			return nil, fmt.Errorf("protected_names.txt:%d: %q is listed twice", i+1, name)
		}
		seen[name] = true
		list = append(list, ProtectedName{Name: name, Tool: tool})
	}
	return list, nil
}
