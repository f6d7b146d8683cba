package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/sandbox"
)

// The checks of the values that are not an enum of another package. Each
// says what is wrong and what to write instead; the caller adds FILE:LINE:
// KEY (or the flag).

func backendName(s string) (string, error) {
	if err := sandbox.ValidBackend(s); err != nil {
		return "", err
	}
	return s, nil
}

// hostPath is a path on the host: absolute or under the home directory,
// never relative (it would depend on where cordon was started).
func hostPath(s string) (string, error) {
	switch {
	case strings.ContainsRune(s, 0):
		return "", errors.New("contains a NUL byte")
	case strings.HasPrefix(s, "/"), strings.HasPrefix(s, "~/"):
		return s, nil // kept as written; expanded and canonicalised where it is used
	}
	return "", errors.New(`must start with / or ~/: write an absolute path, or one under your home directory such as "~/.cache/go-build"`)
}

// protectedName is a path relative to each writable root, inside it.
func protectedName(s string) (string, error) {
	clean := path.Clean(s)
	switch {
	case s == "" || strings.ContainsRune(s, 0):
		return "", errors.New(`must name a path relative to the workspace, e.g. "deploy/keys"`)
	case strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~"):
		return "", errors.New(`must be relative to each writable root, e.g. "deploy/keys", not absolute: to keep a path outside the workspace unreadable use extra_read_deny`)
	case slices.Contains(strings.Split(s, "/"), ".."):
		return "", errors.New(`must stay inside the writable root: remove the ".." components`)
	case clean == ".":
		return "", errors.New(`names the writable root itself: use mode = "read-only" to make the whole workspace read-only`)
	}
	return clean, nil
}

// envName is one variable name to pass into the sandbox.
func envName(s string) (string, error) {
	switch {
	case s == "*":
		return "", errors.New(`a bare "*" would pass every variable, API keys and tokens included: name each variable, e.g. "GOPATH"`)
	case s == "":
		return "", errors.New(`empty name: name a variable, e.g. "GOPATH"`)
	case strings.Contains(s, "*"):
		return "", errors.New(`patterns are not supported: name each variable, e.g. "GOPATH"`)
	case strings.Contains(s, "="):
		return "", errors.New(`name the variable without a value: cordon passes the value it has`)
	case strings.ContainsRune(s, 0):
		return "", errors.New("contains a NUL byte")
	}
	return s, nil
}

// dangerousRules checks dangerous_commands: every rule must parse.
func dangerousRules(list []string) error {
	if _, err := approval.ParseRules(list); err != nil {
		return fmt.Errorf("%v (rule syntax: COMMAND [SUBCOMMAND...] [OPTION...] [-- ARG...] [# REASON], see approval/rules.md)", err)
	}
	return nil
}

func httpAddr(s string) (string, error) {
	_, port, err := net.SplitHostPort(s)
	if err == nil {
		_, err = strconv.ParseUint(port, 10, 16)
	}
	if err != nil {
		return "", fmt.Errorf("%q is not HOST:PORT: write it like \"127.0.0.1:8765\"", s)
	}
	return s, nil
}

func httpOrigin(s string) (string, error) {
	if s == "*" || strings.Contains(s, "*") {
		return "", errors.New(`a wildcard would let any web page drive cordon: name each origin, e.g. "http://localhost:3000"`)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", errors.New(`is not an origin: write scheme://host[:port], e.g. "http://localhost:3000"`)
	}
	return u.Scheme + "://" + u.Host, nil
}

// domainEntry is an allowed_domains or denied_domains entry: a host
// (`example.com`), every subdomain (`*.example.com`), an IP, or
// `localhost:PORT`.
func domainEntry(s string) (string, error) {
	if err := sandbox.ParseDomain(s); err != nil {
		return "", err
	}
	return s, nil
}
