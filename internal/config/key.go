package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// key is what the parser, the layers, status and the SIGHUP diff need of
// a declaration, whatever the type of its values: *Key[T] and *ListKey.
type key interface {
	decl() *spec
	// decode turns a value (from a file, or a flag's argument) into the
	// key's type, or says what is wrong and what to write instead; eg is a
	// good value as the context spells it, for the message.
	decode(v any, eg string) (any, error)
	setDefault(c *Config)
	// replace sets v, as a trusted layer does.
	replace(c *Config, v any, o Origin)
	// tighten sets v if it only tightens, as a workspace file may, and
	// otherwise says why it was dropped; shown is v as the warning names it.
	tighten(c *Config, v any, shown string, o Origin) (dropped string)
	row(c *Config) Setting
	equal(a, b *Config) bool
}

// spec is what every declaration has, whatever the type of its values.
type spec struct {
	name string // the TOML dotted path: "mode", "bash.timeout"
	// example is a good value as TOML writes it: `"2m"`, `["GOPATH"]`.
	example string
	// flags set the key from the command line.
	flags []flagSpec
	// commandLine keys are set by the command line only, never by a file
	// (workspace, state_dir); status reports them with the rest.
	commandLine bool
	// startOnly says why a running server cannot apply a change; "" when
	// a SIGHUP reload applies it.
	startOnly string
}

type flagSpec struct {
	name string // "--mode"
	// value is what a boolean flag sets ("off" for --no-sandbox); "" when
	// the flag's argument is the value.
	value string
}

// keys are every declaration, in the order of keys.go.
var keys []key

// declare adds k to keys. Package variables are initialised in the order
// they are declared, except that one waits for every variable it refers
// to (Go spec, "Package initialization"), through the functions it calls.
// So that keys lists them in the order of keys.go, no declaration may
// refer to another key, or to a package variable declared after keys.go's;
// TestKeyOrder checks.
func declare[K key](k K) K {
	keys = append(keys, k)
	return k
}

func (s *spec) decl() *spec { return s }

// fileExample is the example as a line of a file: `timeout = "2m"`.
func (s *spec) fileExample() string {
	return s.name[strings.LastIndexByte(s.name, '.')+1:] + " = " + s.example
}

// A Key is a setting with one value of type T.
type Key[T comparable] struct {
	spec
	def       T
	kind      kind[T]
	workspace rule[T]
}

// A rule says why a workspace file may not set cand over the current
// value cur, or "" when it may (a workspace file may only tighten). shown
// is cand as the warning names it: "\"danger-full-access\"", or
// "preset \"danger\" (danger-full-access)".
type rule[T any] func(cand T, shown string, cur Value[T]) (dropped string)

// scalar declares a key with one value. example is a good value in TOML,
// for messages.
func scalar[T comparable](name, example string, def T, k kind[T], workspace rule[T]) *Key[T] {
	return declare(&Key[T]{spec: spec{name: name, example: example}, def: def, kind: k, workspace: workspace})
}

// commandLine declares a setting that only the command line sets.
func commandLine(name string) *Key[string] {
	return declare(&Key[string]{spec: spec{name: name, commandLine: true}})
}

// flag adds a flag whose argument is the value.
func (k *Key[T]) flag(name string) *Key[T] {
	k.flags = append(k.flags, flagSpec{name: name})
	return k
}

// flagSets adds a boolean flag that sets value.
func (k *Key[T]) flagSets(name, value string) *Key[T] {
	k.flags = append(k.flags, flagSpec{name: name, value: value})
	return k
}

// fixedAtStart marks a key that a running server cannot change, and why.
func (k *Key[T]) fixedAtStart(why string) *Key[T] {
	k.startOnly = why
	return k
}

// Name is the key as a file spells it: "bash.timeout".
func (k *Key[T]) Name() string { return k.name }

// Default is the value when no layer sets the key.
func (k *Key[T]) Default() T { return k.def }

// Of is the effective value in c and where it came from.
func (k *Key[T]) Of(c *Config) Value[T] { return c.vals[k].(Value[T]) }

// Get is the effective value in c.
func (k *Key[T]) Get(c *Config) T { return k.Of(c).V }

func (k *Key[T]) decode(v any, eg string) (any, error) { return k.kind.decode(v, eg) }

func (k *Key[T]) setDefault(c *Config) { c.vals[k] = Value[T]{k.def, defaultOrigin} }

func (k *Key[T]) replace(c *Config, v any, o Origin) { c.vals[k] = Value[T]{v.(T), o} }

func (k *Key[T]) tighten(c *Config, v any, shown string, o Origin) string {
	if why := k.workspace(v.(T), shown, k.Of(c)); why != "" {
		return why
	}
	k.replace(c, v, o)
	return ""
}

func (k *Key[T]) row(c *Config) Setting {
	v := k.Of(c)
	text := fmt.Sprint(v.V)
	if text == "" {
		text = "(none)"
	}
	var value any = v.V
	if s, ok := value.(fmt.Stringer); ok {
		value = s.String() // a duration is "2m0s" in JSON too, not nanoseconds
	}
	return Setting{Key: k.name, Value: value, Text: text, Origin: v.Origin}
}

func (k *Key[T]) equal(a, b *Config) bool { return k.Get(a) == k.Get(b) }

// A kind is how the values of one type are written.
type kind[T any] struct {
	what string // for a value of another type: "must be a string, e.g. …"
	// text parses a string value, and a flag's argument; integer an
	// integer value. eg is a good value, for the message.
	text    func(s, eg string) (T, error)
	integer func(n int64, eg string) (T, error)
}

func (k kind[T]) decode(v any, eg string) (any, error) {
	switch x := v.(type) {
	case string:
		if k.text != nil {
			return k.text(x, eg)
		}
	case int64:
		if k.integer != nil {
			return k.integer(x, eg)
		}
	}
	return nil, fmt.Errorf("must be %s, e.g. %s; this is %s", k.what, eg, typeName(v))
}

// text is a string checked by parse: an enum, a path, an address.
func text[T any](parse func(string) (T, error)) kind[T] {
	return kind[T]{what: "a string", text: func(s, _ string) (T, error) { return parse(s) }}
}

// duration is a Go duration string, positive and at most max (0: no
// maximum).
func duration(max time.Duration) kind[time.Duration] {
	return kind[time.Duration]{what: "a duration string", text: func(s, eg string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		switch {
		case err != nil:
			return 0, fmt.Errorf("%q is not a duration: write it like \"90s\", \"2m\" or \"1h30m\"", s)
		case d <= 0:
			return 0, fmt.Errorf("%q must be positive, e.g. %s", s, eg)
		case max > 0 && d > max:
			return 0, fmt.Errorf("%q is longer than the maximum %v", s, max)
		}
		return d, nil
	}}
}

// count is a positive number of unit.
func count(unit string) kind[int] {
	return kind[int]{what: "an integer", integer: func(n int64, eg string) (int, error) {
		if n <= 0 || int64(int(n)) != n {
			return 0, fmt.Errorf("%d must be a positive number of %s, e.g. %s", n, unit, eg)
		}
		return int(n), nil
	}}
}

// A ListKey is a setting whose value is a list of strings, each entry with
// the origin of the layer that added it.
type ListKey struct {
	spec
	// each checks one entry and returns it as kept; nil accepts any string.
	each func(string) (string, error)
	// whole checks the list once its entries are; nil accepts any list.
	whole     func([]string) error
	workspace listRule
}

// listRule is what a workspace file may do with a list.
type listRule struct {
	// adds: the file's entries are added to the list, for they only
	// tighten. Otherwise every entry would widen, and a list with any is
	// dropped: refused is what it would do.
	adds    bool
	refused string
	// narrows: the file's list replaces the one in force, keeping only
	// the entries that one already covers (an allow list).
	narrows bool
}

// adds is the rule of a list whose entries only tighten.
var adds = listRule{adds: true}

// narrows is the rule of an allow list: a workspace file may allow less.
var narrows = listRule{narrows: true}

// refused is the rule of a list whose entries widen: a workspace file's
// entries are dropped, and the warning says they would do what.
func refused(what string) listRule { return listRule{refused: what} }

// list declares a list key; each checks one entry (nil: any string).
func list(name, example string, each func(string) (string, error), workspace listRule) *ListKey {
	return declare(&ListKey{spec: spec{name: name, example: example}, each: each, workspace: workspace})
}

// checkedAs adds a check of the whole list.
func (k *ListKey) checkedAs(whole func([]string) error) *ListKey {
	k.whole = whole
	return k
}

// fixedAtStart marks a key that a running server cannot change, and why.
func (k *ListKey) fixedAtStart(why string) *ListKey {
	k.startOnly = why
	return k
}

// Name is the key as a file spells it: "http.allowed_origins".
func (k *ListKey) Name() string { return k.name }

// Of is the effective list in c, and where it and each entry came from.
func (k *ListKey) Of(c *Config) List { return c.vals[k].(List) }

// Get is the effective list in c.
func (k *ListKey) Get(c *Config) []string { return k.Of(c).Values() }

func (k *ListKey) decode(v any, eg string) (any, error) {
	list, err := stringList(v, eg)
	if err != nil {
		return nil, err
	}
	if k.each != nil {
		for i, s := range list {
			if list[i], err = k.each(s); err != nil {
				return nil, fmt.Errorf("entry %d (%q): %w", i+1, s, err)
			}
		}
	}
	if k.whole != nil {
		if err := k.whole(list); err != nil {
			return nil, err
		}
	}
	return list, nil
}

func stringList(v any, eg string) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("must be an array of strings, e.g. %s; this is %s", eg, typeName(v))
	}
	list := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("entry %d must be a string, e.g. %s; this is %s", i+1, eg, typeName(e))
		}
		list = append(list, s)
	}
	return list, nil
}

func (k *ListKey) setDefault(c *Config) { c.vals[k] = List{Origin: defaultOrigin} }

func (k *ListKey) replace(c *Config, v any, o Origin) { c.vals[k] = newList(v.([]string), o) }

func (k *ListKey) tighten(c *Config, v any, _ string, o Origin) string {
	entries := v.([]string)
	if k.workspace.narrows {
		return k.narrow(c, entries, o)
	}
	if !k.workspace.adds {
		if len(entries) > 0 {
			return quoteList(entries) + " " + k.workspace.refused
		}
		return ""
	}
	l := k.Of(c)
	for _, e := range entries {
		if l.add(e, o) {
			l.Origin = o
		}
	}
	c.vals[k] = l
	return ""
}

// narrow keeps, of a workspace file's entries, those the list in force
// covers; the rest would widen it and are dropped.
func (k *ListKey) narrow(c *Config, entries []string, o Origin) string {
	cur := k.Get(c)
	l := List{Origin: o}
	var dropped []string
	for _, e := range entries {
		if slices.ContainsFunc(cur, func(have string) bool { return domainCovers(have, e) }) {
			l.add(e, o)
		} else {
			dropped = append(dropped, e)
		}
	}
	// A list whose every entry widens says nothing about narrowing: the
	// list in force stays. An empty list does narrow, to nothing.
	if len(l.Entries) > 0 || len(entries) == 0 {
		c.vals[k] = l
	}
	if len(dropped) > 0 {
		return quoteList(dropped) + " would allow what the list in force does not"
	}
	return ""
}

func (k *ListKey) row(c *Config) Setting {
	l := k.Of(c)
	r := Setting{Key: k.name, Value: l.Values(), Text: "(none)", Origin: l.Origin, Entries: l.Entries}
	if len(l.Entries) > 0 {
		r.Text = strings.Join(l.Values(), ", ")
	}
	return r
}

func (k *ListKey) equal(a, b *Config) bool { return slices.Equal(k.Get(a), k.Get(b)) }

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
