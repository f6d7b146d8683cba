package config

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// The schema, from the declarations: a key is top-level ("mode") or in a
// table ("bash.timeout" is timeout in [bash]). Built by init, which runs
// after every package variable, keys included.
var (
	topKeys   = map[string]key{}
	tableKeys = map[string]map[string]key{}
	keyNames  []string // every name a file may set, sorted: for messages
)

func init() {
	for _, k := range keys {
		s := k.decl()
		if s.commandLine {
			continue
		}
		table, sub, inTable := strings.Cut(s.name, ".")
		switch {
		case !inTable:
			topKeys[s.name] = k
		case tableKeys[table] == nil:
			tableKeys[table] = map[string]key{sub: k}
		default:
			tableKeys[table][sub] = k
		}
		keyNames = append(keyNames, s.name)
	}
	sort.Strings(keyNames)
}

// parseFile parses and validates one config file. name is only used in
// messages.
func parseFile(name string, data []byte) (*layer, error) {
	l := &layer{path: name, vals: map[key]layerValue{}}
	var values map[string]toml.Primitive
	md, err := toml.Decode(string(data), &values)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			key := ""
			if pe.LastKey != "" {
				key = pe.LastKey + ": "
			}
			return nil, &Error{[]string{fmt.Sprintf("%s: %sTOML syntax error: %s; fix the syntax (the README's Configuration section has an example file)",
				fileLine(name, pe.Position.Line), key, strings.TrimSuffix(pe.Message, "."))}}
		}
		return nil, &Error{[]string{fmt.Sprintf("%s: not a valid TOML file: %v", name, err)}}
	}
	d := &tomlDoc{md: &md, top: values}
	var problems []problem
	report := func(key toml.Key, format string, args ...any) {
		problems = append(problems, problem{line: d.line(key), text: fmt.Sprintf("%s: %s", key, fmt.Sprintf(format, args...))})
	}
	parse := func(path toml.Key, k key) {
		line := d.line(path)
		v, err := d.decode(path, k)
		if err != nil {
			report(path, "%v", err)
			return
		}
		l.vals[k] = layerValue{v: v, line: line}
	}
	badTable := map[string]bool{}
	seen := map[string]bool{}
	// MetaData.Keys lists every key in document order, but not the
	// implicit tables of dotted keys: mode.x = 1 lists mode.x, not mode.
	// So each known key is checked at the first key at or below it.
	for _, path := range md.Keys() {
		top := path[0]
		k, isKey := topKeys[top]
		sub, isTable := tableKeys[top]
		first := !seen[top]
		seen[top] = true
		if top == "secrets" {
			if first {
				d.parseSecrets(l, report)
			}
			continue
		}
		switch {
		case !isKey && !isTable:
			if first {
				report(path[:1], "unknown key%s; remove it (known keys: %s)", suggest(top, keyNames), strings.Join(keyNames, ", "))
			}
			continue
		case isKey:
			if first {
				parse(path[:1], k)
			}
			continue
		case first:
			var v any
			d.md.PrimitiveDecode(d.top[top], &v)
			if _, ok := v.(map[string]any); !ok {
				badTable[top] = true
				report(path[:1], "must be a table, e.g. [%s] on a line of its own with %s below it; this is %s",
					top, strings.Join(sortedKeys(sub), " and "), typeName(v))
			}
		}
		if badTable[top] || len(path) < 2 {
			continue
		}
		// The key within the table: one name, or a nested table's
		// ([profiles.mcp_server] network is profiles.mcp_server.network).
		j, subName := 2, path[1]
		for _, ok := sub[subName]; !ok && j < len(path) && nests(sub, subName); _, ok = sub[subName] {
			subName += "." + path[j]
			j++
		}
		name := top + "." + subName
		if seen[name] {
			continue
		}
		seen[name] = true
		if k, isKey = sub[subName]; isKey {
			parse(path[:j], k)
			continue
		}
		if nests(sub, subName) {
			var v any
			d.md.PrimitiveDecode(d.mustPrim(path[:j]), &v)
			if _, ok := v.(map[string]any); !ok {
				report(path[:j], "must be a table, e.g. [%s] on a line of its own; this is %s", name, typeName(v))
			}
			continue
		}
		report(path[:j], "unknown key%s; remove it ([%s] has %s)", suggest(subName, sortedKeys(sub)), top, strings.Join(sortedKeys(sub), ", "))
	}
	if len(problems) > 0 {
		sort.SliceStable(problems, func(i, j int) bool { return problems[i].line < problems[j].line })
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = fileLine(name, p.line) + ": " + p.text
		}
		return nil, &Error{msgs}
	}
	return l, nil
}

type problem struct {
	line int
	text string
}

// tomlDoc finds values and the lines of their keys. MetaData keeps key
// positions private; the one way to them is the ParseError that a value's
// Unmarshaler causes, which carries the position of the key being decoded.
type tomlDoc struct {
	md  *toml.MetaData
	top map[string]toml.Primitive
}

// nests reports whether name is a table within a table's keys.
func nests(sub map[string]key, name string) bool {
	for k := range sub {
		if strings.HasPrefix(k, name+".") {
			return true
		}
	}
	return false
}

// mustPrim is prim for a path md.Keys listed.
func (d *tomlDoc) mustPrim(key toml.Key) toml.Primitive {
	p, _ := d.prim(key)
	return p
}

// prim returns the value of a key path.
func (d *tomlDoc) prim(key toml.Key) (toml.Primitive, bool) {
	p, ok := d.top[key[0]]
	for _, k := range key[1:] {
		if !ok {
			break
		}
		var m map[string]toml.Primitive
		if d.md.PrimitiveDecode(p, &m) != nil {
			return p, false
		}
		p, ok = m[k]
	}
	return p, ok
}

// line is the line of key, or for an implicit table (bash.timeout = … at the
// top level defines bash on no line of its own) the line of its first key;
// 0 if unknown.
func (d *tomlDoc) line(key toml.Key) int {
	if l := d.ownLine(key); l > 0 {
		return l
	}
	for _, k := range d.md.Keys() {
		if len(k) > len(key) && slices.Equal(k[:len(key)], key) {
			if l := d.ownLine(k); l > 0 {
				return l
			}
		}
	}
	return 0
}

func (d *tomlDoc) ownLine(key toml.Key) int {
	p, ok := d.prim(key)
	if !ok {
		return 0
	}
	var pe toml.ParseError
	if errors.As(d.md.PrimitiveDecode(p, positionProbe{}), &pe) {
		return pe.Position.Line
	}
	return 0
}

// positionProbe refuses every value, so that decoding it yields a
// ParseError positioned at the key.
type positionProbe struct{}

var errPositionProbe = errors.New("position probe")

func (positionProbe) UnmarshalTOML(any) error { return errPositionProbe }

// decode is the value of the key at path, checked by its declaration.
func (d *tomlDoc) decode(path toml.Key, k key) (any, error) {
	p, ok := d.prim(path)
	if !ok {
		return nil, errors.New("cannot be read")
	}
	var v any
	if err := d.md.PrimitiveDecode(p, &v); err != nil {
		return nil, err
	}
	return k.decode(v, k.decl().fileExample())
}

func sortedKeys[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func typeName(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case int64:
		return fmt.Sprintf("the integer %d", v)
	case float64:
		return fmt.Sprintf("the number %v", v)
	case bool:
		return fmt.Sprintf("the boolean %v", v)
	case time.Time:
		return "a date/time"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	}
	return fmt.Sprintf("a %T", v)
}
