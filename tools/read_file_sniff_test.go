package tools

import (
	"testing"
	"unicode/utf8"
)

// FuzzBinaryReason: the sniff's UTF-8 check answers as a rune-by-rune
// decode does.
func FuzzBinaryReason(f *testing.F) {
	for _, s := range []string{"", "plain", "caf\xc3\xa9", "caf\xc3", "\xe6\x97", "\xe6\x97\xa5", "a\xff", "\xff", "\xf0\x9f\x98", "\xf0\x9f\x98\x80", "x\xc3(", "\xed\xa0\x80"} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, head []byte, cut bool) {
		if got, want := binaryReason(head, cut), decodedReason(head, cut); got != want {
			t.Fatalf("binaryReason(%q, %v) = %q, a decode says %q", head, cut, got, want)
		}
	})
}

// decodedReason is binaryReason written as a decode, rune by rune.
func decodedReason(head []byte, cut bool) string {
	for i := 0; i < len(head); i++ {
		if head[i] == 0 {
			return "it contains NUL bytes"
		}
	}
	for len(head) > 0 {
		r, size := utf8.DecodeRune(head)
		if r == utf8.RuneError && size == 1 {
			if cut && !utf8.FullRune(head) {
				return ""
			}
			return "it is not valid UTF-8"
		}
		head = head[size:]
	}
	return ""
}
