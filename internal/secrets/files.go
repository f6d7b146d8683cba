package secrets

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"syscall"
)

// A secret's files (a tool's credential file: ~/.npmrc, gh's hosts.yml)
// are never read by the sandbox. Where the backend can lay a file over a
// path (bwrap), the command sees a copy in which every real value of the
// vault is replaced by its sentinel, so that the tool reading it sends the
// sentinel and the egress proxy puts the value back for the secret's hosts.

// maxFileSize bounds a file the vault masks: credential files are small,
// and a larger one is left hidden rather than read whole.
const maxFileSize = 1 << 20

// Files are the paths of every secret's files.
func (v *Vault) Files() []string {
	if v == nil {
		return nil
	}
	var out []string
	for _, e := range v.entries {
		for _, f := range e.Files {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// Sentinelize replaces each real value in b, in each of its forms (a
// credential file may hold it percent-encoded, as git's store does), by
// its sentinel. Longer forms go first, so that a value holding another is
// replaced whole.
func (v *Vault) Sentinelize(b []byte) []byte {
	if v.Empty() {
		return b
	}
	type swap struct{ form, sentinel []byte }
	var order []swap
	for _, e := range v.entries {
		for _, f := range forms(e.Value) {
			order = append(order, swap{f, []byte(e.sentinel)})
		}
	}
	slices.SortStableFunc(order, func(x, y swap) int { return cmp.Compare(len(y.form), len(x.form)) })
	for _, s := range order {
		b = bytes.ReplaceAll(b, s.form, s.sentinel)
	}
	return b
}

// MaskedFile is Masked of the file at path.
func (v *Vault) MaskedFile(path string) ([]byte, error) {
	// O_NONBLOCK: a FIFO put in the file's place must not hang the call.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return v.Masked(f)
}

// Masked reads f and returns its content with every real value replaced
// by its sentinel. It fails, so that the file stays hidden, for anything
// it cannot show without a real value: not a regular file, larger than
// 1 MiB, or a content where a value survives the replacement.
func (v *Vault) Masked(f *os.File) ([]byte, error) {
	path := f.Name()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxFileSize)
	}
	masked := v.Sentinelize(data)
	if v.Holds(string(masked)) {
		return nil, fmt.Errorf("%s: a secret's value survives the masking", path)
	}
	if bytes.Equal(masked, data) {
		// No value in it: the file was rotated (gh auth refresh, npm
		// login) or leads elsewhere; what it holds now is a credential
		// cordon does not know, and stays hidden.
		return nil, fmt.Errorf("%s holds none of the secrets' values", path)
	}
	return v.starOtherTokens(masked), nil
}

// looksRandom reports whether a run reads as a generated token rather
// than words: letters of both cases (a base62 or base64 key), or letters
// and digits outside a path (a hex key, a Slack token). A path, a key
// name in capitals or a lower-case user name reads as words.
func looksRandom(run []byte) bool {
	var upper, lower, digit, slash bool
	for _, c := range run {
		switch {
		case 'A' <= c && c <= 'Z':
			upper = true
		case 'a' <= c && c <= 'z':
			lower = true
		case '0' <= c && c <= '9':
			digit = true
		case c == '/':
			slash = true
		}
	}
	return upper && lower || (upper || lower) && digit && !slash
}

// tokenRun is text that may be a credential: 16 or more of the characters
// tokens are written with (a GitHub, GitLab, npm or AWS key; a base64
// user:password; percent-encoded, as git's store keeps a password).
var tokenRun = regexp.MustCompile(`[A-Za-z0-9_+/=%-]{16,}`)

// starOtherTokens stars out every run that may be a credential and is not
// a sentinel: a file named for one secret (~/.git-credentials) may hold
// others the human never configured, which its copy must not show. The
// sentinels stay whole, and so does what a tool finds its token by: a
// run that reads as words (looksRandom) — a key such as _authToken= or
// ANTHROPIC_API_KEY=, a user name, a registry's path.
func (v *Vault) starOtherTokens(b []byte) []byte {
	return tokenRun.ReplaceAllFunc(b, func(run []byte) []byte {
		out := make([]byte, 0, len(run))
		for len(run) > 0 {
			at, sentinel := len(run), ""
			for _, e := range v.entries {
				if i := bytes.Index(run, []byte(e.sentinel)); i >= 0 && i < at {
					at, sentinel = i, e.sentinel
				}
			}
			if before := run[:at]; len(before) >= 16 && looksRandom(before) {
				out = append(out, bytes.Repeat([]byte("*"), len(before))...)
			} else {
				out = append(out, before...)
			}
			out = append(out, sentinel...)
			run = run[at+len(sentinel):]
		}
		return out
	})
}
