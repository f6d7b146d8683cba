package sessionlog

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNewSessionID(t *testing.T) {
	shape := regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for range 100 {
		id := NewSessionID()
		assert.Regexp(t, shape, id)
		assert.NoError(t, ValidateSessionID(id))
		assert.False(t, seen[id], "duplicate id %s", id)
		seen[id] = true
	}
}

func TestValidateSessionID(t *testing.T) {
	for _, id := range []string{"a", "A1", "0", "abc.def", "a_b-c", "20260102T150405Z-0123456789abcdef0123456789abcdef", strings.Repeat("x", 128)} {
		assert.NoError(t, ValidateSessionID(id), id)
	}
	for _, id := range []string{
		"",
		".",
		"..",
		"../x",
		"x/../y",
		"a..b",
		"a/b",
		`a\b`,
		"/abs",
		".hidden",
		"-flag",
		"_x",
		"a b",
		"a\x00b",
		"a\nb",
		"é",
		"a:b",
		"a%2f",
		"~",
		strings.Repeat("x", 129),
	} {
		assert.ErrorIs(t, ValidateSessionID(id), ErrInvalidSessionID, "%q", id)
	}
}
