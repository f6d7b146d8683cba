package sandbox

import (
	"os"
	"slices"
	"strings"
)

// envAllowlist names the variables a confined command inherits from
// cordon's environment; everything else (API keys, tokens) stays out
// unless the user names it in env_passthrough.
var envAllowlist = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "LANG",
	"LANGUAGE", "TZ", "TMPDIR", "PWD", "EDITOR", "PAGER", "NO_COLOR",
}

// envDenied are never passed, even when named: they would reach outside
// the sandbox.
var envDenied = []string{"DOCKER_HOST"}

// Environ filters a host environment down to the allowlist, LC_*
// variables and the passthrough names.
func Environ(host []string, passthrough []string) []string {
	var out []string
	for _, kv := range host {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || slices.Contains(envDenied, name) {
			continue
		}
		if slices.Contains(envAllowlist, name) || strings.HasPrefix(name, "LC_") || slices.Contains(passthrough, name) {
			out = append(out, kv)
		}
	}
	return out
}

// runnerEnv is a command's environment: env (the caller's, or this
// process's when nil) with the backend's variables over it.
func runnerEnv(env, backend []string) []string {
	if env == nil {
		env = os.Environ()
	}
	return mergeEnv(env, backend)
}

// MergeEnv returns base with every variable of over replacing the one of
// the same name.
func mergeEnv(base, over []string) []string {
	names := make(map[string]bool, len(over))
	for _, kv := range over {
		name, _, _ := strings.Cut(kv, "=")
		names[name] = true
	}
	out := make([]string, 0, len(base)+len(over))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if !names[name] {
			out = append(out, kv)
		}
	}
	return append(out, over...)
}
