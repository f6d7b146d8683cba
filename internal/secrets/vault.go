package secrets

import (
	"fmt"
	"slices"
	"strings"
)

// Vault is one session's secrets, each with its sentinel, and the CA the
// egress proxy terminates TLS with. Nothing in it may enter the sandbox
// but Env's sentinels and the CA's certificate.
type Vault struct {
	entries []entry
	ca      *authority
}

type entry struct {
	Secret
	sentinel string
}

// New makes a vault with fresh sentinels and a fresh CA.
func New(list []Secret) (*Vault, error) {
	v := &Vault{}
	seen := map[string]bool{}
	envs := map[string]bool{}
	for _, s := range list {
		if err := s.Check(); err != nil {
			return nil, err
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("secret %s is configured twice", s.Name)
		}
		seen[s.Name] = true
		if s.Env != "" {
			if envs[s.Env] {
				return nil, fmt.Errorf("secret %s: env %s is another secret's too", s.Name, s.Env)
			}
			envs[s.Env] = true
		}
		sent, err := newSentinel()
		if err != nil {
			return nil, err
		}
		s.Value, s.Hosts, s.Files = slices.Clone(s.Value), slices.Clone(s.Hosts), slices.Clone(s.Files)
		v.entries = append(v.entries, entry{Secret: s, sentinel: sent})
	}
	ca, err := newAuthority()
	if err != nil {
		return nil, fmt.Errorf("secrets: making the session's CA: %w", err)
	}
	v.ca = ca
	return v, nil
}

// Empty reports whether there is nothing to keep (a nil vault is empty).
func (v *Vault) Empty() bool { return v == nil || len(v.entries) == 0 }

// Env is what the sandbox's environment gets: NAME=sentinel for each
// secret with an env variable.
func (v *Vault) Env() []string {
	if v == nil {
		return nil
	}
	var env []string
	for _, e := range v.entries {
		if e.Env != "" {
			env = append(env, e.Env+"="+e.sentinel)
		}
	}
	return env
}

// EnvNames are the variables Env sets.
func (v *Vault) EnvNames() []string {
	var names []string
	for _, kv := range v.Env() {
		n, _, _ := strings.Cut(kv, "=")
		names = append(names, n)
	}
	return names
}

// Info describes one secret for status and logs: never its value.
type Info struct {
	Name       string   `json:"name"`
	Env        string   `json:"env,omitempty"`
	Hosts      []string `json:"hosts"`
	InjectBody bool     `json:"inject_body,omitempty"`
	InjectURL  bool     `json:"inject_url,omitempty"`
}

// Describe lists the secrets without their values or sentinels.
func (v *Vault) Describe() []Info {
	if v == nil {
		return nil
	}
	var list []Secret
	for _, e := range v.entries {
		list = append(list, e.Secret)
	}
	return Describe(list)
}

// Sentinel is the sentinel of the secret named name ("" if none): for
// tests and for files the human asks to hold one.
func (v *Vault) Sentinel(name string) string {
	if v == nil {
		return ""
	}
	for _, e := range v.entries {
		if e.Name == name {
			return e.sentinel
		}
	}
	return ""
}

// Holds reports whether s contains a real value of the vault.
func (v *Vault) Holds(s string) bool {
	if v == nil {
		return false
	}
	for _, e := range v.entries {
		if e.HeldIn(s) {
			return true
		}
	}
	return false
}

// Describe lists secrets for status and logs, without their values.
func Describe(list []Secret) []Info {
	var out []Info
	for _, s := range list {
		out = append(out, Info{Name: s.Name, Env: s.Env, Hosts: slices.Clone(s.Hosts), InjectBody: s.InjectBody, InjectURL: s.InjectURL})
	}
	return out
}
