// Package secrets keeps the credentials a confined command may use but never
// read. Inside the sandbox each secret exists only as a sentinel, a random
// string made per session; cordon's egress proxy, which terminates the
// command's TLS with a per-session CA (ca.go), puts the real value in place
// of the sentinel only in requests to that secret's hosts, and refuses a
// request that carries a sentinel anywhere else (inject.go).
package secrets

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// Secret is one credential as the human configured it.
type Secret struct {
	// Name names the secret in logs and status; never its value.
	Name string
	// Value is the real credential. It never enters the sandbox.
	Value []byte
	// Hosts are where the value may be sent: "api.example.com" that host,
	// "*.example.com" any subdomain of it (not example.com itself).
	Hosts []string
	// Env is the environment variable in which the sandbox sees the
	// sentinel ("" for none).
	Env string
	// InjectBody also replaces the sentinel in request bodies to Hosts,
	// and InjectURL in the request's URL (headers are always replaced).
	// Off by default: a body, and a URL's path or query, are data the host
	// may store and serve back (a file name, a search).
	InjectBody bool
	InjectURL  bool
	// Files are absolute paths of files that hold the value (a tool's
	// credential file): the sandbox never reads them, and under bwrap sees
	// a copy with each value replaced by its sentinel (files.go).
	Files []string
}

var (
	nameRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	envRe  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	hostRe = regexp.MustCompile(`^(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`)
)

// Check reports what makes s unusable.
func (s Secret) Check() error {
	if !nameRe.MatchString(s.Name) {
		return fmt.Errorf("secret name %q: use letters, digits, '_', '.' or '-'", s.Name)
	}
	if len(s.Value) < 8 {
		return fmt.Errorf("secret %s: the value is empty or shorter than 8 bytes, too short to be told apart from other text", s.Name)
	}
	if strings.ContainsAny(string(s.Value), "\r\n\x00") {
		// It goes into header lines: a newline would let it add headers.
		return fmt.Errorf("secret %s: the value holds a newline or NUL byte", s.Name)
	}
	if len(s.Hosts) == 0 {
		return fmt.Errorf("secret %s: hosts is empty; name the hosts it may be sent to", s.Name)
	}
	for _, h := range s.Hosts {
		if !hostRe.MatchString(h) {
			return fmt.Errorf("secret %s: host %q is not a host name or *.domain", s.Name, h)
		}
	}
	if s.Env != "" && !envRe.MatchString(s.Env) {
		return fmt.Errorf("secret %s: env %q is not a variable name", s.Name, s.Env)
	}
	for _, f := range s.Files {
		if !filepath.IsAbs(f) {
			return fmt.Errorf("secret %s: file %q is not an absolute path", s.Name, f)
		}
	}
	return nil
}

// sentinelPrefix starts every sentinel, so that a human reading a request
// or a file recognises one.
const sentinelPrefix = "cordon-sentinel-"

// newSentinel is a fresh sentinel: the prefix and 128 random bits. It is
// made of characters that survive headers, URLs, JSON and shell quoting.
func newSentinel() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return sentinelPrefix + hex.EncodeToString(b[:]), nil
}

// hostMatches reports whether pattern (a Secret's host) names host.
func hostMatches(pattern, host string) bool {
	pattern, host = strings.ToLower(pattern), strings.ToLower(strings.TrimSuffix(host, "."))
	if rest, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+rest)
	}
	return pattern == host
}
