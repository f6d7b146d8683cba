package tools

import (
	"slices"
	"strings"

	"github.com/cordonhq/cordon/internal/secrets"
	"github.com/cordonhq/cordon/sandbox"
)

// A session's secrets: its commands see each one's sentinel, made for
// this session alone, and the egress proxy of each restricted call puts
// the real value in for the secret's hosts (internal/egress). The vault,
// with the session's CA, lives as long as the session.

// secretVault is the session's vault, made at its first use from the
// configured secrets; nil (no secrets in the sandbox at all) if it cannot
// be made.
func (s *Session) secretVault(conf Config) *secrets.Vault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vault == nil {
		v, err := secrets.New(conf.Secrets)
		if err != nil {
			conf.Logger.Error().Err(err).Msg("secrets: the session's sentinels and CA could not be made; its commands get no secrets")
			return nil
		}
		s.vault = v
	}
	return s.vault
}

// withoutSecretValues drops every variable that holds a secret's real
// value, in every network mode: a wide env_passthrough (or the secret's
// own from_env variable passed through) must not carry it in under allow
// or deny, where no proxy scrubs the environment, nor under a workspace
// file that narrows restricted to deny.
func withoutSecretValues(env []string, list []secrets.Secret) []string {
	if len(list) == 0 {
		return env
	}
	return slices.DeleteFunc(env, func(kv string) bool {
		_, val, _ := strings.Cut(kv, "=")
		return slices.ContainsFunc(list, func(s secrets.Secret) bool { return s.HeldIn(val) })
	})
}

// withSecretFiles adds the secrets' files to the settings: read-deny for
// every command and file tool, whatever the network mode. A bwrap sandbox
// with the session's secrets shows a masked copy in their place
// (sandbox/secrets.go); the FS fence refuses them, as it refuses every
// read-deny entry, rather than serve a masked copy: the fence would need
// the session's vault, and a denial cannot leak what a copy could.
func withSecretFiles(set sandbox.Settings, list []secrets.Secret) sandbox.Settings {
	for _, s := range list {
		for _, f := range s.Files {
			if !slices.Contains(set.SecretFiles, f) {
				set.SecretFiles = append(slices.Clip(set.SecretFiles), f)
			}
		}
	}
	return set
}
