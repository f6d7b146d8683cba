package sessionlog

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrInvalidSessionID is wrapped by every error ValidateSessionID returns.
var ErrInvalidSessionID = errors.New("invalid session id")

// maxSessionIDLen keeps <id>.jsonl well inside every file system's name
// limit (255 bytes).
const maxSessionIDLen = 128

// NewSessionID returns a fresh session id: the UTC time to the second, so
// that ids sort by creation in a directory listing, then 128 random bits in
// hex, so that ids cannot be guessed (over HTTP they name a client's
// session). For example 20260102T150405Z-5f2c…e9 (49 characters).
func NewSessionID() string {
	var b [16]byte
	// crypto/rand.Read never fails (it crashes the program if the system's
	// randomness is unavailable).
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// ValidateSessionID checks an id that came from a user (a flag, a command
// argument, an HTTP header) before it names a file. An id is 1 to 128
// characters of [A-Za-z0-9._-], starts with a letter or digit (not ".",
// which would hide the file or name the directory, nor "-", which reads as a
// flag) and never contains "..". It therefore holds no path separator and
// can never name anything but a file directly inside the sessions directory.
func ValidateSessionID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty", ErrInvalidSessionID)
	}
	if len(id) > maxSessionIDLen {
		return fmt.Errorf("%w: longer than %d characters", ErrInvalidSessionID, maxSessionIDLen)
	}
	for i := 0; i < len(id); i++ {
		if !idChar(id[i]) {
			return fmt.Errorf("%w: %q has character %q; use only letters, digits, '.', '_' and '-'", ErrInvalidSessionID, id, id[i])
		}
	}
	if !isAlnum(id[0]) {
		return fmt.Errorf("%w: %q must start with a letter or digit", ErrInvalidSessionID, id)
	}
	if strings.Contains(id, "..") {
		return fmt.Errorf("%w: %q contains \"..\"", ErrInvalidSessionID, id)
	}
	return nil
}

// idChar reports whether c may appear in a session id. The set needs no
// escaping in JSON, a file name or a URL, which the line format relies on.
func idChar(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '-'
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
