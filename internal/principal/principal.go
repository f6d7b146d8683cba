// Package principal reads and edits the file of HTTP principals: the
// clients that each have a token of their own, and with it their own
// sessions, logs, process ids and, where the line names one, workspace.
//
// The file holds one principal a line, `NAME TOKEN [WORKSPACE]`; blank
// lines and lines starting with # are skipped. TOKEN is the token itself
// or, as `cordon token add` writes it, `sha256:` and the hex SHA-256 of the
// token, so that the file need not hold a secret. WORKSPACE is the rest of
// the line (a path may hold spaces). The file must not be readable by
// anyone but its owner.
package principal

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// FileName is the token file's name under the state dir.
const FileName = "http-tokens"

const hashPrefix = "sha256:"

// Principal is one line of the file.
type Principal struct {
	Name      string
	Workspace string // "" for the server's workspace
	digest    [sha256.Size]byte
}

// Matches says whether token is this principal's, in constant time.
func (p Principal) Matches(token string) bool {
	d := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(d[:], p.digest[:]) == 1
}

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidateName refuses a name that could not be told apart in a log or a
// line of the file.
func ValidateName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("principal name %q: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// Load reads the file. A missing file is no principals. A file that
// others may read, or with a bad line, is an error naming the line: no
// principal of a broken file is honoured.
func Load(path string) ([]Principal, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: mode %04o lets others read it: chmod 600 %s", path, st.Mode().Perm(), path)
	}
	var out []Principal
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("%s:%d: principal %q is named twice", path, n, p.Name)
		}
		seen[p.Name] = true
		out = append(out, p)
	}
	return out, sc.Err()
}

func parseLine(line string) (Principal, error) {
	name, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimLeft(rest, " \t")
	token, ws, _ := strings.Cut(rest, " ")
	ws = strings.TrimSpace(ws)
	var p Principal
	if err := ValidateName(name); err != nil {
		return p, err
	}
	if token == "" {
		return p, fmt.Errorf("principal %q has no token: write NAME TOKEN [WORKSPACE]", name)
	}
	p.Name = name
	if hexDigest, ok := strings.CutPrefix(token, hashPrefix); ok {
		b, err := hex.DecodeString(hexDigest)
		if err != nil || len(b) != sha256.Size {
			return p, fmt.Errorf("principal %q: %s must be followed by 64 hex digits", name, hashPrefix)
		}
		copy(p.digest[:], b)
	} else {
		if len(token) < 16 {
			return p, fmt.Errorf("principal %q: a token of fewer than 16 characters is too easy to guess", name)
		}
		p.digest = sha256.Sum256([]byte(token))
	}
	if ws != "" && !filepath.IsAbs(ws) {
		return p, fmt.Errorf("principal %q: workspace %q must be an absolute path", name, ws)
	}
	p.Workspace = ws
	return p, nil
}

// Add appends a principal with a new random token, which it returns: the
// file keeps only the token's digest.
func Add(path, name, workspace string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	if strings.ContainsAny(workspace, "\n\r") {
		return "", errors.New("the workspace path holds a line break")
	}
	existing, err := Load(path)
	if err != nil {
		return "", err
	}
	for _, p := range existing {
		if p.Name == name {
			return "", fmt.Errorf("principal %q exists: revoke it first to give it a new token", name)
		}
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	token := hex.EncodeToString(b)
	d := sha256.Sum256([]byte(token))
	line := name + " " + hashPrefix + hex.EncodeToString(d[:])
	if workspace != "" {
		line += " " + workspace
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		old = append(old, '\n')
	}
	return token, replace(path, append(old, line+"\n"...))
}

// Revoke removes a principal's line.
func Revoke(path, name string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var out []byte
	found := false
	for _, line := range strings.SplitAfter(string(old), "\n") {
		if first, _, _ := strings.Cut(strings.TrimSpace(line), " "); first == name && !strings.HasPrefix(first, "#") {
			found = true
			continue
		}
		out = append(out, line...)
	}
	if !found {
		return fmt.Errorf("no principal %q in %s", name, path)
	}
	return replace(path, out)
}

// replace writes the file anew, mode 0600, by rename: a server re-reading
// it never sees half a file.
func replace(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".http-tokens-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
