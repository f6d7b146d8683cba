package sandbox

import "strings"

// RunnerFailureRule tells "the runner itself failed to start the command"
// (infrastructure) from "the command ran and exited non-zero" (a normal
// outcome), from the exit code and stderr alone.
type RunnerFailureRule struct {
	// AllowedExitCodes, when non-empty, must contain the exit code.
	AllowedExitCodes []int
	// FatalSignatures are case-insensitive substrings of stderr.
	FatalSignatures []string
	// InformationalLines are whole stderr lines (trimmed, case-insensitive)
	// that are dropped before the signatures are looked for.
	InformationalLines []string
}

// Matches returns the first fatal signature found, or "" and false. Exit 0
// never matches.
func (r RunnerFailureRule) Matches(exitCode int, stderr string) (string, bool) {
	if exitCode == 0 {
		return "", false
	}
	if len(r.AllowedExitCodes) > 0 && !containsInt(r.AllowedExitCodes, exitCode) {
		return "", false
	}
	var kept []string
	for _, line := range strings.Split(stderr, "\n") {
		if !isInformational(line, r.InformationalLines) {
			kept = append(kept, line)
		}
	}
	text := strings.ToLower(strings.Join(kept, "\n"))
	for _, sig := range r.FatalSignatures {
		if sig != "" && strings.Contains(text, strings.ToLower(sig)) {
			return sig, true
		}
	}
	return "", false
}

func isInformational(line string, informational []string) bool {
	t := strings.TrimSpace(line)
	for _, info := range informational {
		if strings.EqualFold(t, strings.TrimSpace(info)) {
			return true
		}
	}
	return false
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// MatchAny applies rules in order and returns the first match.
func matchAny(rules []RunnerFailureRule, exitCode int, stderr string) (string, bool) {
	for _, r := range rules {
		if sig, ok := r.Matches(exitCode, stderr); ok {
			return sig, true
		}
	}
	return "", false
}

// LooksDenied reports whether output carries one of the backend's denial
// signatures. Callers combine it with a failing exit code.
func looksDenied(signatures []string, output string) bool {
	lower := strings.ToLower(output)
	for _, s := range signatures {
		if s != "" && strings.Contains(lower, strings.ToLower(s)) {
			return true
		}
	}
	return false
}
