package config

import (
	"os"
	"path/filepath"
)

// DefaultStateDir is $XDG_STATE_HOME/cordon, else ~/.local/state/cordon:
// session logs, session tmp directories and the HTTP token.
func DefaultStateDir(home string) string {
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "cordon")
	}
	return filepath.Join(home, ".local", "state", "cordon")
}

// DefaultConfigDir is $XDG_CONFIG_HOME/cordon, else ~/.config/cordon.
func DefaultConfigDir(home string) string {
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "cordon")
	}
	return filepath.Join(home, ".config", "cordon")
}
