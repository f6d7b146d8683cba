package config

import (
	"fmt"
	"strings"

	"github.com/cordonhq/cordon/approval"
)

// Config is the effective configuration: a value for every key, with its
// origin. Read a key's value with the key: config.Mode.Get(c).
type Config struct {
	vals map[key]any // a Value[T] or a List, for every key

	// Derived is the posture approval.Derive computes from preset, mode and
	// approval; Rules are the default dangerous rules plus
	// dangerous_commands.
	Derived approval.DerivedState
	Rules   approval.Rules

	// Secrets are the [secrets.NAME] tables of the trusted layers, by
	// name (secrets.go); their values are read by ResolveSecrets.
	Secrets []SecretSpec

	// Files are the files read, in order; Warnings the widenings that
	// workspace files tried, dropped.
	Files    []File
	Warnings []Warning
}

// Value is one effective setting and the layer that set it.
type Value[T any] struct {
	V      T
	Origin Origin
}

// List is a list setting: the layer that last changed it, and the layer
// of each entry (a workspace file adds to some lists).
type List struct {
	Entries []Entry
	Origin  Origin
}

// Entry is one entry of a list and the layer that added it.
type Entry struct {
	Value  string `json:"value"`
	Origin Origin `json:"origin"`
}

// Values are the entries, without their origins.
func (l List) Values() []string {
	out := make([]string, len(l.Entries))
	for i, e := range l.Entries {
		out[i] = e.Value
	}
	return out
}

func newList(vals []string, o Origin) List {
	l := List{Origin: o}
	for _, v := range vals {
		l.add(v, o)
	}
	return l
}

// add appends v unless the list has it already.
func (l *List) add(v string, o Origin) bool {
	for _, e := range l.Entries {
		if e.Value == v {
			return false
		}
	}
	l.Entries = append(l.Entries, Entry{Value: v, Origin: o})
	return true
}

// File is a config file that was read, and its layer.
type File struct {
	Path  string `json:"path"`
	Layer Source `json:"layer"`
}

// Warning is a widening that a workspace file tried, dropped.
type Warning struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Key     string `json:"key"`
	Message string `json:"message"`
}

func (w Warning) String() string {
	return fmt.Sprintf("%s: %s: %s", fileLine(w.File, w.Line), w.Key, w.Message)
}

// Error is every problem found in the config files, one per line, each
// naming FILE:LINE: KEY.
type Error struct{ Problems []string }

func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0]
	}
	return fmt.Sprintf("%d problems in the configuration:\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// defaultConfig is the configuration before any layer.
func defaultConfig() *Config {
	c := &Config{vals: make(map[key]any, len(keys))}
	for _, k := range keys {
		k.setDefault(c)
	}
	return c
}
