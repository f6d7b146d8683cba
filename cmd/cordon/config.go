package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
)

// A config file (SPEC §8) is TOML with these keys; nothing else is
// accepted:
//
//	preset            string  safe | review | danger
//	mode              string  read-only | workspace-write | danger-full-access
//	approval          string  never | on-request | ask-dangerous | always
//	sandbox           string  required | auto | off
//	backend           string  auto | bwrap | landlock | seatbelt
//	network           string  allow | deny
//	fallback_root     string  starts with / or ~/
//	extra_write_allow [string] each starts with / or ~/
//	extra_read_deny   [string] each starts with / or ~/
//	protected_paths   [string] relative to each writable root, no ".."
//	env_passthrough   [string] variable names: no "*", no "=", not empty
//	dangerous_commands [string] extra rules for ask-dangerous, in the syntax
//	                  of approval.ParseRule (approval/rules.md), e.g.
//	                  "kubectl delete # deletes cluster resources"; they are
//	                  added to the default rules, never replace them
//	approval_timeout  string  a Go duration, > 0: "5m"
//	[bash] timeout    string  a Go duration, > 0 and at most 10m: "2m"
//	[bash] max_output_chars integer > 0
//	[http] addr       string  HOST:PORT; used by `cordon serve --http config`
//	[http] allowed_origins [string] scheme://host[:port], no "*"
//
// Keys are matched exactly (TOML keys are case-sensitive: MODE is an
// unknown key, not mode). Every problem is reported as FILE:LINE: KEY:
// what is wrong and what to do, and any problem fails the whole load:
// cordon never runs half-configured.

// maxConfigSize bounds a config file: a config is a few hundred bytes, and
// anything much larger is the wrong file.
const maxConfigSize = 1 << 20

// opt is one key of one file: whether the file sets it, its value and the
// line of the key.
type opt[T any] struct {
	Set   bool
	Value T
	Line  int
}

// fileConfig is one config file, parsed and validated: every value that is
// set is well-formed. Paths are kept as written ("~/" unexpanded) so that
// status shows what the file says.
type fileConfig struct {
	Path              string
	Preset            opt[approval.Preset]
	Mode              opt[sandbox.Mode]
	Approval          opt[approval.Policy]
	Sandbox           opt[sandbox.Requirement]
	Backend           opt[string]
	Network           opt[sandbox.Network]
	FallbackRoot      opt[string]
	ExtraWriteAllow   opt[[]string]
	ExtraReadDeny     opt[[]string]
	ProtectedPaths    opt[[]string]
	EnvPassthrough    opt[[]string]
	DangerousCommands opt[[]string]
	ApprovalTimeout   opt[time.Duration]
	BashTimeout       opt[time.Duration]
	MaxOutputChars    opt[int]
	HTTPAddr          opt[string]
	AllowedOrigins    opt[[]string]
}

// keyParser validates one value and stores it in the file's config. Its
// error says what is wrong and what to write instead; the caller adds
// FILE:LINE: KEY.
type keyParser func(fc *fileConfig, v any, line int) error

// topKeys and tableKeys are the schema: every key a file may set.
var topKeys = map[string]keyParser{
	"preset":             enumKey(func(c *fileConfig) *opt[approval.Preset] { return &c.Preset }, approval.ParsePreset, `preset = "review"`),
	"mode":               enumKey(func(c *fileConfig) *opt[sandbox.Mode] { return &c.Mode }, sandbox.ParseMode, `mode = "workspace-write"`),
	"approval":           enumKey(func(c *fileConfig) *opt[approval.Policy] { return &c.Approval }, approval.ParsePolicy, `approval = "ask-dangerous"`),
	"sandbox":            enumKey(func(c *fileConfig) *opt[sandbox.Requirement] { return &c.Sandbox }, sandbox.ParseRequirement, `sandbox = "required"`),
	"backend":            enumKey(func(c *fileConfig) *opt[string] { return &c.Backend }, parseBackend, `backend = "auto"`),
	"network":            enumKey(func(c *fileConfig) *opt[sandbox.Network] { return &c.Network }, sandbox.ParseNetwork, `network = "deny"`),
	"fallback_root":      enumKey(func(c *fileConfig) *opt[string] { return &c.FallbackRoot }, hostPath, `fallback_root = "/srv/agent"`),
	"extra_write_allow":  listKey(func(c *fileConfig) *opt[[]string] { return &c.ExtraWriteAllow }, hostPath, `extra_write_allow = ["~/.cache/go-build"]`),
	"extra_read_deny":    listKey(func(c *fileConfig) *opt[[]string] { return &c.ExtraReadDeny }, hostPath, `extra_read_deny = ["~/company-secrets"]`),
	"protected_paths":    listKey(func(c *fileConfig) *opt[[]string] { return &c.ProtectedPaths }, protectedName, `protected_paths = ["deploy/keys"]`),
	"env_passthrough":    listKey(func(c *fileConfig) *opt[[]string] { return &c.EnvPassthrough }, envName, `env_passthrough = ["GOPATH"]`),
	"dangerous_commands": dangerousKey,
	"approval_timeout":   durationKey(func(c *fileConfig) *opt[time.Duration] { return &c.ApprovalTimeout }, 0, `approval_timeout = "5m"`),
	"bash":               nil, // a table: tableKeys
	"http":               nil,
}

var tableKeys = map[string]map[string]keyParser{
	"bash": {
		"timeout":          durationKey(func(c *fileConfig) *opt[time.Duration] { return &c.BashTimeout }, tools.MaxBashTimeout, `timeout = "2m"`),
		"max_output_chars": positiveIntKey(func(c *fileConfig) *opt[int] { return &c.MaxOutputChars }, `max_output_chars = 30000`),
	},
	"http": {
		"addr":            enumKey(func(c *fileConfig) *opt[string] { return &c.HTTPAddr }, httpAddr, `addr = "127.0.0.1:8765"`),
		"allowed_origins": listKey(func(c *fileConfig) *opt[[]string] { return &c.AllowedOrigins }, httpOrigin, `allowed_origins = ["http://localhost:3000"]`),
	},
}

// configError is every problem found in the config files, one per line.
type configError struct{ problems []string }

func (e *configError) Error() string {
	if len(e.problems) == 1 {
		return e.problems[0]
	}
	return fmt.Sprintf("%d problems in the configuration:\n  %s", len(e.problems), strings.Join(e.problems, "\n  "))
}

// errConfigMissing is returned by readConfigFile for a file that does not
// exist, which is fine for the user and workspace files.
var errConfigMissing = errors.New("no such file")

// readConfigFile reads a config file. A file that exists but cannot be read
// (permissions, a directory, a FIFO, a dangling symlink) is an error: a
// config the human wrote must never be skipped silently.
func readConfigFile(name string) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			if _, lerr := os.Lstat(name); lerr == nil {
				return nil, fmt.Errorf("%s: cannot read the config: it is a symlink to a file that does not exist; fix or remove the link", name)
			}
			return nil, errConfigMissing
		}
		return nil, fmt.Errorf("%s: cannot read the config: %v; fix its permissions or move it away", name, unwrapPathError(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the config: %v", name, unwrapPathError(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: cannot read the config: it is a %s, not a regular file; replace it with a TOML file or move it away", name, fileKind(fi.Mode()))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the config: %v; fix its permissions or move it away", name, unwrapPathError(err))
	}
	if len(data) > maxConfigSize {
		return nil, fmt.Errorf("%s: the config is larger than %d bytes: is this the right file?", name, maxConfigSize)
	}
	return data, nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// parseConfig parses and validates one config file. name is only used in
// messages.
func parseConfig(name string, data []byte) (*fileConfig, error) {
	fc := &fileConfig{Path: name}
	var values map[string]toml.Primitive
	md, err := toml.Decode(string(data), &values)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			key := ""
			if pe.LastKey != "" {
				key = pe.LastKey + ": "
			}
			return nil, &configError{[]string{fmt.Sprintf("%s: %sTOML syntax error: %s; fix the syntax (SPEC §8 has an example file)",
				fileLine(name, pe.Position.Line), key, strings.TrimSuffix(pe.Message, "."))}}
		}
		return nil, &configError{[]string{fmt.Sprintf("%s: not a valid TOML file: %v", name, err)}}
	}
	d := &tomlDoc{md: &md, top: values}
	var problems []problem
	report := func(key toml.Key, format string, args ...any) {
		problems = append(problems, problem{line: d.line(key), text: fmt.Sprintf("%s: %s", key, fmt.Sprintf(format, args...))})
	}
	badTable := map[string]bool{}
	seen := map[string]bool{}
	// MetaData.Keys lists every key in document order, but not the
	// implicit tables of dotted keys: mode.x = 1 lists mode.x, not mode.
	// So each known key is checked at the first key at or below it.
	for _, key := range md.Keys() {
		top := key[0]
		parse, known := topKeys[top]
		sub, isTable := tableKeys[top]
		first := !seen[top]
		seen[top] = true
		switch {
		case !known:
			if first {
				report(key[:1], "unknown key%s; remove it (known keys: %s)", suggest(top, topKeyNames()), strings.Join(topKeyNames(), ", "))
			}
			continue
		case !isTable:
			if first {
				if err := d.parseValue(fc, key[:1], parse); err != nil {
					report(key[:1], "%v", err)
				}
			}
			continue
		case first:
			var v any
			d.md.PrimitiveDecode(d.top[top], &v)
			if _, ok := v.(map[string]any); !ok {
				badTable[top] = true
				report(key[:1], "must be a table, e.g. [%s] on a line of its own with %s below it; this is %s",
					top, strings.Join(sortedKeys(sub), " and "), typeName(v))
			}
		}
		if badTable[top] || len(key) < 2 {
			continue
		}
		name := top + "." + key[1]
		if seen[name] {
			continue
		}
		seen[name] = true
		if parse, known = sub[key[1]]; !known {
			report(key[:2], "unknown key%s; remove it ([%s] has %s)", suggest(key[1], sortedKeys(sub)), top, strings.Join(sortedKeys(sub), ", "))
		} else if err := d.parseValue(fc, key[:2], parse); err != nil {
			report(key[:2], "%v", err)
		}
	}
	if len(problems) > 0 {
		sort.SliceStable(problems, func(i, j int) bool { return problems[i].line < problems[j].line })
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = fileLine(name, p.line) + ": " + p.text
		}
		return nil, &configError{msgs}
	}
	return fc, nil
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

func (d *tomlDoc) parseValue(fc *fileConfig, key toml.Key, parse keyParser) error {
	p, ok := d.prim(key)
	if !ok {
		return errors.New("cannot be read")
	}
	var v any
	if err := d.md.PrimitiveDecode(p, &v); err != nil {
		return err
	}
	return parse(fc, v, d.line(key))
}

func topKeyNames() []string {
	var names []string
	for k, sub := range tableKeys {
		for s := range sub {
			names = append(names, k+"."+s)
		}
	}
	for k := range topKeys {
		if _, isTable := tableKeys[k]; !isTable {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return names
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// suggest names the known key that an unknown one is probably a typo of.
func suggest(key string, known []string) string {
	for _, k := range known {
		short := k[strings.LastIndexByte(k, '.')+1:]
		if strings.EqualFold(short, key) || editDistance(strings.ToLower(short), strings.ToLower(key)) <= 2 {
			return fmt.Sprintf(" (did you mean %q?)", k)
		}
	}
	return ""
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
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

// enumKey is a string key checked by parse (an enum, a path, an address).
func enumKey[T any](field func(*fileConfig) *opt[T], parse func(string) (T, error), example string) keyParser {
	return func(fc *fileConfig, v any, line int) error {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("must be a string, e.g. %s; this is %s", example, typeName(v))
		}
		t, err := parse(s)
		if err != nil {
			return err
		}
		*field(fc) = opt[T]{Set: true, Value: t, Line: line}
		return nil
	}
}

// listKey is an array of strings, each checked by check.
func listKey(field func(*fileConfig) *opt[[]string], check func(string) (string, error), example string) keyParser {
	return func(fc *fileConfig, v any, line int) error {
		list, err := stringList(v, example)
		if err != nil {
			return err
		}
		for i, s := range list {
			if list[i], err = check(s); err != nil {
				return fmt.Errorf("entry %d (%q): %w", i+1, s, err)
			}
		}
		*field(fc) = opt[[]string]{Set: true, Value: list, Line: line}
		return nil
	}
}

func stringList(v any, example string) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("must be an array of strings, e.g. %s; this is %s", example, typeName(v))
	}
	list := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("entry %d must be a string, e.g. %s; this is %s", i+1, example, typeName(e))
		}
		list = append(list, s)
	}
	return list, nil
}

// dangerousKey is the list of extra dangerous-command rules; each must
// parse with approval.ParseRules.
func dangerousKey(fc *fileConfig, v any, line int) error {
	const example = `dangerous_commands = ["kubectl delete # deletes cluster resources"]`
	list, err := stringList(v, example)
	if err != nil {
		return err
	}
	if _, err := approval.ParseRules(list); err != nil {
		return fmt.Errorf("%v (rule syntax: COMMAND [SUBCOMMAND...] [OPTION...] [-- ARG...] [# REASON], see approval/rules.md)", err)
	}
	fc.DangerousCommands = opt[[]string]{Set: true, Value: list, Line: line}
	return nil
}

// durationKey is a Go duration string, positive and at most max (0: no
// maximum).
func durationKey(field func(*fileConfig) *opt[time.Duration], max time.Duration, example string) keyParser {
	return func(fc *fileConfig, v any, line int) error {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("must be a duration string, e.g. %s; this is %s", example, typeName(v))
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q is not a duration: write it like \"90s\", \"2m\" or \"1h30m\"", s)
		}
		if d <= 0 {
			return fmt.Errorf("%q must be positive, e.g. %s", s, example)
		}
		if max > 0 && d > max {
			return fmt.Errorf("%q is longer than the maximum %v", s, max)
		}
		*field(fc) = opt[time.Duration]{Set: true, Value: d, Line: line}
		return nil
	}
}

func positiveIntKey(field func(*fileConfig) *opt[int], example string) keyParser {
	return func(fc *fileConfig, v any, line int) error {
		n, ok := v.(int64)
		if !ok {
			return fmt.Errorf("must be an integer, e.g. %s; this is %s", example, typeName(v))
		}
		if n <= 0 || int64(int(n)) != n {
			return fmt.Errorf("%d must be a positive number of characters, e.g. %s", n, example)
		}
		*field(fc) = opt[int]{Set: true, Value: int(n), Line: line}
		return nil
	}
}

func parseBackend(s string) (string, error) {
	if err := sandbox.ValidBackend(s); err != nil {
		return "", err
	}
	return s, nil
}

// hostPath is a path on the host: absolute or under the home directory,
// never relative (it would depend on where cordon was started).
func hostPath(s string) (string, error) {
	switch {
	case strings.ContainsRune(s, 0):
		return "", errors.New("contains a NUL byte")
	case strings.HasPrefix(s, "/"), strings.HasPrefix(s, "~/"):
		return s, nil // kept as written; expanded and canonicalised where it is used
	}
	return "", errors.New(`must start with / or ~/: write an absolute path, or one under your home directory such as "~/.cache/go-build"`)
}

// protectedName is a path relative to each writable root, inside it.
func protectedName(s string) (string, error) {
	clean := path.Clean(s)
	switch {
	case s == "" || strings.ContainsRune(s, 0):
		return "", errors.New(`must name a path relative to the workspace, e.g. "deploy/keys"`)
	case strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~"):
		return "", errors.New(`must be relative to each writable root, e.g. "deploy/keys", not absolute: to keep a path outside the workspace unreadable use extra_read_deny`)
	case slices.Contains(strings.Split(s, "/"), ".."):
		return "", errors.New(`must stay inside the writable root: remove the ".." components`)
	case clean == ".":
		return "", errors.New(`names the writable root itself: use mode = "read-only" to make the whole workspace read-only`)
	}
	return clean, nil
}

// envName is one variable name to pass into the sandbox.
func envName(s string) (string, error) {
	switch {
	case s == "*":
		return "", errors.New(`a bare "*" would pass every variable, API keys and tokens included: name each variable, e.g. "GOPATH"`)
	case s == "":
		return "", errors.New(`empty name: name a variable, e.g. "GOPATH"`)
	case strings.Contains(s, "*"):
		return "", errors.New(`patterns are not supported: name each variable, e.g. "GOPATH"`)
	case strings.Contains(s, "="):
		return "", errors.New(`name the variable without a value: cordon passes the value it has`)
	case strings.ContainsRune(s, 0):
		return "", errors.New("contains a NUL byte")
	}
	return s, nil
}

func httpAddr(s string) (string, error) {
	_, port, err := net.SplitHostPort(s)
	if err == nil {
		_, err = strconv.ParseUint(port, 10, 16)
	}
	if err != nil {
		return "", fmt.Errorf("%q is not HOST:PORT: write it like \"127.0.0.1:8765\"", s)
	}
	return s, nil
}

func httpOrigin(s string) (string, error) {
	if s == "*" || strings.Contains(s, "*") {
		return "", errors.New(`a wildcard would let any web page drive cordon: name each origin, e.g. "http://localhost:3000"`)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", errors.New(`is not an origin: write scheme://host[:port], e.g. "http://localhost:3000"`)
	}
	return u.Scheme + "://" + u.Host, nil
}
