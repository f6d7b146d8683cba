//go:build linux

package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadConfigFile(t *testing.T) {
	dir := t.TempDir()
	_, err := readConfigFile(filepath.Join(dir, "missing.toml"))
	assert.ErrorIs(t, err, errConfigMissing)
	_, err = readConfigFile(filepath.Join(dir, "missing", "config.toml"))
	assert.ErrorIs(t, err, errConfigMissing)

	require.NoError(t, os.Mkdir(filepath.Join(dir, "adir.toml"), 0o755))
	_, err = readConfigFile(filepath.Join(dir, "adir.toml"))
	assert.ErrorContains(t, err, "it is a directory, not a regular file")

	require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling.toml")))
	_, err = readConfigFile(filepath.Join(dir, "dangling.toml"))
	assert.ErrorContains(t, err, "symlink to a file that does not exist")

	big := filepath.Join(dir, "big.toml")
	require.NoError(t, os.WriteFile(big, make([]byte, maxConfigSize+1), 0o644))
	_, err = readConfigFile(big)
	assert.ErrorContains(t, err, "larger than")
}
