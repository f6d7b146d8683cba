package config

import "fmt"

// Setting is one row of `cordon status`: a key, its effective value and
// where it came from, and for a list where each entry came from.
type Setting struct {
	Key     string  `json:"-"`
	Value   any     `json:"value"`
	Text    string  `json:"-"` // the value as the text status prints it
	Origin  Origin  `json:"origin"`
	Entries []Entry `json:"entries,omitempty"`
}

// Settings lists every effective value, in the order of SPEC §8.
func (c *Config) Settings() []Setting {
	rows := make([]Setting, len(keys))
	for i, k := range keys {
		rows[i] = k.row(c)
	}
	return rows
}

// Change is a key whose value differs between two configurations.
type Change struct {
	Key      string
	Old, New string // as status prints them
	// StartOnly says why a running server cannot apply the change; ""
	// when it can.
	StartOnly string
}

// String is "key: old → new".
func (c Change) String() string { return fmt.Sprintf("%s: %s → %s", c.Key, c.Old, c.New) }

// Diff lists the keys whose values differ from old to cur, compared as
// values of the key's type.
func Diff(old, cur *Config) []Change {
	var out []Change
	for _, k := range keys {
		if !k.equal(old, cur) {
			out = append(out, Change{Key: k.decl().name, Old: k.row(old).Text, New: k.row(cur).Text, StartOnly: k.decl().startOnly})
		}
	}
	return out
}

// KeepStartOnly gives c the values that started holds for every key a
// running server cannot change, so that c stays the truth about the
// running server.
func (c *Config) KeepStartOnly(started *Config) {
	for _, k := range keys {
		if k.decl().startOnly != "" {
			c.vals[k] = started.vals[k]
		}
	}
}
