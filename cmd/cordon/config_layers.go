package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
)

// Configuration layers, later ones overriding earlier (SPEC §8):
//
//  1. the defaults;
//  2. the user's file, $XDG_CONFIG_HOME/cordon/config.toml else
//     ~/.config/cordon/config.toml: trusted, may widen;
//  3. the workspace's cordon.toml, then its .cordon/config.toml (both are
//     read when both exist): may only tighten, see config.tighten;
//  4. --config FILE: trusted, like the user's file;
//  5. the flags, which outrank every file in both directions.
//
// In a trusted layer a key replaces the earlier value, lists included. A
// preset sets mode and approval, and an explicit mode or approval in the
// same layer beats the layer's preset. Files are read once at start; only
// `cordon serve` re-reads them, on SIGHUP (reload.go).

// value is one effective setting and the layer that set it.
type value[T any] struct {
	V      T
	Origin origin
}

// listValue is a list setting: the layer that last replaced it, and the
// layer of each entry (a workspace file appends to some lists).
type listValue struct {
	Entries []listEntry
	Origin  origin
}

type listEntry struct {
	V      string
	Origin origin
}

func (l listValue) values() []string {
	out := make([]string, len(l.Entries))
	for i, e := range l.Entries {
		out[i] = e.V
	}
	return out
}

func newList(vals []string, o origin) listValue {
	l := listValue{Origin: o}
	for _, v := range vals {
		l.add(v, o)
	}
	return l
}

// add appends v unless the list has it already.
func (l *listValue) add(v string, o origin) bool {
	for _, e := range l.Entries {
		if e.V == v {
			return false
		}
	}
	l.Entries = append(l.Entries, listEntry{V: v, Origin: o})
	return true
}

// config is the effective configuration with the origin of every value.
type config struct {
	Preset            value[approval.Preset] // as named; "" when no layer named one
	Mode              value[sandbox.Mode]
	Approval          value[approval.Policy]
	Sandbox           value[sandbox.Requirement]
	Backend           value[string]
	Network           value[sandbox.Network]
	FallbackRoot      value[string]
	ExtraWriteAllow   listValue
	ExtraReadDeny     listValue
	ProtectedPaths    listValue
	EnvPassthrough    listValue
	DangerousCommands listValue
	ApprovalTimeout   value[time.Duration]
	BashTimeout       value[time.Duration]
	MaxOutputChars    value[int]
	HTTPAddr          value[string]
	AllowedOrigins    listValue

	// Workspace and StateDir come from flags only; they are here so that
	// status reports their origin with the rest.
	Workspace value[string]
	StateDir  value[string]

	// Derived is the posture approval.Derive computes from Preset, Mode and
	// Approval; Rules are the default dangerous rules plus
	// DangerousCommands.
	Derived approval.DerivedState
	Rules   approval.Rules

	Files    []configFile
	Warnings []configWarning
}

// configFile is a file that was read, and its layer.
type configFile struct {
	Path  string `json:"path"`
	Layer string `json:"layer"`
}

// configWarning is a widening that a workspace file tried, dropped.
type configWarning struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Key     string `json:"key"`
	Message string `json:"message"`
}

func (w configWarning) String() string {
	return fmt.Sprintf("%s: %s: %s", fileLine(w.File, w.Line), w.Key, w.Message)
}

func defaultConfig() *config {
	d := defaultOrigin
	return &config{
		Mode:            value[sandbox.Mode]{approval.DefaultPreset.Mode(), d},
		Approval:        value[approval.Policy]{approval.DefaultPreset.Approval(), d},
		Sandbox:         value[sandbox.Requirement]{sandbox.Required, d},
		Backend:         value[string]{"auto", d},
		Network:         value[sandbox.Network]{sandbox.NetworkAllow, d},
		Preset:          value[approval.Preset]{"", d},
		FallbackRoot:    value[string]{"", d},
		ApprovalTimeout: value[time.Duration]{defaultApprovalTimeout, d},
		BashTimeout:     value[time.Duration]{tools.DefaultBashTimeout, d},
		MaxOutputChars:  value[int]{tools.DefaultMaxOutput, d},
		HTTPAddr:        value[string]{"", d},
		ExtraWriteAllow: listValue{Origin: d}, ExtraReadDeny: listValue{Origin: d}, ProtectedPaths: listValue{Origin: d},
		EnvPassthrough: listValue{Origin: d}, DangerousCommands: listValue{Origin: d}, AllowedOrigins: listValue{Origin: d},
	}
}

// defaultApprovalTimeout is SPEC §5's default for an unanswered approval.
const defaultApprovalTimeout = 5 * time.Minute

// configSources says where the configuration comes from: the files to
// look for and the flags. load can run again (SIGHUP) with the same
// sources.
type configSources struct {
	home      string
	workspace value[string]
	stateDir  value[string]
	// explicit is --config FILE, absolute; "" when not given.
	explicit string
	flags    flagValues
}

// flagValues are the flags that override the config; "" or 0 when not
// given.
type flagValues struct {
	preset, mode, approval, network, backend string
	requirement                              sandbox.Requirement
	requirementFlag                          string // --sandbox, --no-sandbox or --sandbox-required
	approvalTimeout                          time.Duration
}

func (s configSources) userFile() string {
	return filepath.Join(sandbox.DefaultConfigDir(s.home), "config.toml")
}

func (s configSources) workspaceFiles() []string {
	return []string{filepath.Join(s.workspace.V, "cordon.toml"), filepath.Join(s.workspace.V, ".cordon", "config.toml")}
}

// load reads every layer and applies the flags. Any problem in any file is
// an error (all of them are reported), so that nothing runs
// half-configured.
func (s configSources) load() (*config, error) {
	c := defaultConfig()
	c.Workspace, c.StateDir = s.workspace, s.stateDir
	var problems []string
	layer := func(name, source string) {
		data, err := readConfigFile(name)
		if errors.Is(err, errConfigMissing) {
			if source == sourceConfig {
				problems = append(problems, fmt.Sprintf("--config %s: no such file; check the path", name))
			}
			return
		}
		if err != nil {
			problems = append(problems, err.Error())
			return
		}
		fc, err := parseConfig(name, data)
		if err != nil {
			var ce *configError
			if errors.As(err, &ce) {
				problems = append(problems, ce.problems...)
			} else {
				problems = append(problems, err.Error())
			}
			return
		}
		c.Files = append(c.Files, configFile{Path: name, Layer: source})
		if source == sourceWorkspace {
			c.tighten(fc)
		} else {
			c.override(fc, source)
		}
	}
	layer(s.userFile(), sourceUser)
	for _, f := range s.workspaceFiles() {
		layer(f, sourceWorkspace)
	}
	if s.explicit != "" {
		layer(s.explicit, sourceConfig)
	}
	if len(problems) > 0 {
		return nil, &configError{problems}
	}
	c.applyFlags(s.flags)
	if err := c.finish(); err != nil {
		return nil, err
	}
	return c, nil
}

// override applies a trusted file (the user's, --config): every key it
// sets replaces the earlier value.
func (c *config) override(f *fileConfig, source string) {
	at := func(line int) origin { return origin{Source: source, File: f.Path, Line: line} }
	if f.Preset.Set {
		o := at(f.Preset.Line)
		c.Preset = value[approval.Preset]{f.Preset.Value, o}
		c.Mode = value[sandbox.Mode]{f.Preset.Value.Mode(), o}
		c.Approval = value[approval.Policy]{f.Preset.Value.Approval(), o}
	}
	set(&c.Mode, f.Mode, at)
	set(&c.Approval, f.Approval, at)
	set(&c.Sandbox, f.Sandbox, at)
	set(&c.Backend, f.Backend, at)
	set(&c.Network, f.Network, at)
	set(&c.FallbackRoot, f.FallbackRoot, at)
	set(&c.ApprovalTimeout, f.ApprovalTimeout, at)
	set(&c.BashTimeout, f.BashTimeout, at)
	set(&c.MaxOutputChars, f.MaxOutputChars, at)
	set(&c.HTTPAddr, f.HTTPAddr, at)
	for _, l := range []struct {
		dst *listValue
		src opt[[]string]
	}{
		{&c.ExtraWriteAllow, f.ExtraWriteAllow}, {&c.ExtraReadDeny, f.ExtraReadDeny},
		{&c.ProtectedPaths, f.ProtectedPaths}, {&c.EnvPassthrough, f.EnvPassthrough},
		{&c.DangerousCommands, f.DangerousCommands}, {&c.AllowedOrigins, f.AllowedOrigins},
	} {
		if l.src.Set {
			*l.dst = newList(l.src.Value, at(l.src.Line))
		}
	}
}

func set[T any](dst *value[T], src opt[T], at func(int) origin) {
	if src.Set {
		*dst = value[T]{src.Value, at(src.Line)}
	}
}

// requirementRank orders sandbox requirements by strictness.
var requirementRank = map[sandbox.Requirement]int{sandbox.Off: 0, sandbox.Auto: 1, sandbox.Required: 2}

// tighten applies a workspace file, which may only tighten what the
// earlier layers (defaults and the user's file) set. Anything else it
// tries is dropped, with a warning naming the file, line and key:
//
//	key                 a workspace file may           dropped
//	preset              narrow mode / stricter approval  each part that widens
//	mode                narrow it (sandbox.Mode order)   a wider mode
//	approval            make it stricter (StricterThan)  a looser policy
//	sandbox             make it stricter: off < auto < required   a weaker one
//	network             deny                             allow over deny
//	backend             nothing: the machine's owner chooses   any change
//	fallback_root       nothing: where agents write      any change
//	extra_write_allow   nothing: every entry widens      any entry
//	env_passthrough     nothing: it lets host secrets in any entry
//	extra_read_deny     add entries                      (entries only add)
//	protected_paths     add entries                      (entries only add)
//	dangerous_commands  add rules                        (rules only add)
//	approval_timeout    shorten it                       a longer one
//	bash.timeout        shorten it                       a longer one
//	bash.max_output_chars  lower it                      a larger one
//	http.addr           nothing: a project does not pick where cordon listens   any change
//	http.allowed_origins  nothing: every origin widens   any entry
//
// A value equal to the current one is accepted (and reported as set by
// the workspace file). An explicit mode or approval in the file beats the
// file's preset, as in a trusted layer.
func (c *config) tighten(f *fileConfig) {
	at := func(line int) origin { return origin{Source: sourceWorkspace, File: f.Path, Line: line} }
	first := len(c.Warnings)
	defer func() {
		mine := c.Warnings[first:]
		sort.SliceStable(mine, func(i, j int) bool { return mine[i].Line < mine[j].Line })
	}()
	drop := func(line int, key, format string, args ...any) {
		c.Warnings = append(c.Warnings, configWarning{File: f.Path, Line: line, Key: key,
			Message: fmt.Sprintf(format, args...) + "; a workspace file may only tighten, so this was dropped (put it in your user config, --config or a flag if you mean it)"})
	}

	// The preset counts through its mode and approval.
	modeCand, modeKey, modeLine := f.Mode.Value, "mode", f.Mode.Line
	approvalCand, approvalKey, approvalLine := f.Approval.Value, "approval", f.Approval.Line
	if f.Preset.Set {
		if !f.Mode.Set {
			modeCand, modeKey, modeLine = f.Preset.Value.Mode(), "preset", f.Preset.Line
		}
		if !f.Approval.Set {
			approvalCand, approvalKey, approvalLine = f.Preset.Value.Approval(), "preset", f.Preset.Line
		}
	}
	presetUsed := false
	if modeCand != "" {
		if modeCand.WiderThan(c.Mode.V) {
			drop(modeLine, modeKey, "%s would widen the mode from %s (%s)", describe(modeKey, f.Preset.Value, string(modeCand)), c.Mode.V, c.Mode.Origin)
		} else {
			c.Mode = value[sandbox.Mode]{modeCand, at(modeLine)}
			presetUsed = presetUsed || modeKey == "preset"
		}
	}
	if approvalCand != "" {
		if approvalCand != c.Approval.V && !approvalCand.StricterThan(c.Approval.V) {
			drop(approvalLine, approvalKey, "%s would loosen approval from %s (%s)", describe(approvalKey, f.Preset.Value, string(approvalCand)), c.Approval.V, c.Approval.Origin)
		} else {
			c.Approval = value[approval.Policy]{approvalCand, at(approvalLine)}
			presetUsed = presetUsed || approvalKey == "preset"
		}
	}
	if presetUsed || (f.Preset.Set && f.Mode.Set && f.Approval.Set) {
		c.Preset = value[approval.Preset]{f.Preset.Value, at(f.Preset.Line)}
	}

	if f.Sandbox.Set {
		if requirementRank[f.Sandbox.Value] < requirementRank[c.Sandbox.V] {
			drop(f.Sandbox.Line, "sandbox", "%q would weaken the sandbox requirement from %s (%s)", f.Sandbox.Value, c.Sandbox.V, c.Sandbox.Origin)
		} else {
			c.Sandbox = value[sandbox.Requirement]{f.Sandbox.Value, at(f.Sandbox.Line)}
		}
	}
	if f.Network.Set {
		if f.Network.Value == sandbox.NetworkAllow && c.Network.V == sandbox.NetworkDeny {
			drop(f.Network.Line, "network", "\"allow\" would open the network that %s denies", c.Network.Origin)
		} else {
			c.Network = value[sandbox.Network]{f.Network.Value, at(f.Network.Line)}
		}
	}
	sameOnly(c, &c.Backend, f.Backend, at, drop, "backend", "the backend is chosen by the machine's owner")
	sameOnly(c, &c.FallbackRoot, f.FallbackRoot, at, drop, "fallback_root", "the fallback root is where agents without a workspace write")
	sameOnly(c, &c.HTTPAddr, f.HTTPAddr, at, drop, "http.addr", "a project does not choose where cordon listens")
	if f.ExtraWriteAllow.Set && len(f.ExtraWriteAllow.Value) > 0 {
		drop(f.ExtraWriteAllow.Line, "extra_write_allow", "%s would make more of the file system writable", quoteList(f.ExtraWriteAllow.Value))
	}
	if f.EnvPassthrough.Set && len(f.EnvPassthrough.Value) > 0 {
		drop(f.EnvPassthrough.Line, "env_passthrough", "%s would pass host variables into the sandbox", quoteList(f.EnvPassthrough.Value))
	}
	if f.AllowedOrigins.Set && len(f.AllowedOrigins.Value) > 0 {
		drop(f.AllowedOrigins.Line, "http.allowed_origins", "%s would let more web pages reach the server", quoteList(f.AllowedOrigins.Value))
	}
	for _, l := range []struct {
		dst *listValue
		src opt[[]string]
	}{{&c.ExtraReadDeny, f.ExtraReadDeny}, {&c.ProtectedPaths, f.ProtectedPaths}, {&c.DangerousCommands, f.DangerousCommands}} {
		for _, v := range l.src.Value {
			if l.dst.add(v, at(l.src.Line)) {
				l.dst.Origin = at(l.src.Line)
			}
		}
	}
	shorter(&c.ApprovalTimeout, f.ApprovalTimeout, at, drop, "approval_timeout")
	shorter(&c.BashTimeout, f.BashTimeout, at, drop, "bash.timeout")
	if f.MaxOutputChars.Set {
		if f.MaxOutputChars.Value > c.MaxOutputChars.V {
			drop(f.MaxOutputChars.Line, "bash.max_output_chars", "%d is larger than %d (%s)", f.MaxOutputChars.Value, c.MaxOutputChars.V, c.MaxOutputChars.Origin)
		} else {
			c.MaxOutputChars = value[int]{f.MaxOutputChars.Value, at(f.MaxOutputChars.Line)}
		}
	}
}

type dropFunc func(line int, key, format string, args ...any)

// sameOnly accepts a workspace value only when it changes nothing.
func sameOnly(c *config, dst *value[string], src opt[string], at func(int) origin, drop dropFunc, key, why string) {
	if !src.Set {
		return
	}
	if src.Value != dst.V {
		drop(src.Line, key, "%q would replace %q (%s): %s", src.Value, dst.V, dst.Origin, why)
		return
	}
	*dst = value[string]{src.Value, at(src.Line)}
}

func shorter(dst *value[time.Duration], src opt[time.Duration], at func(int) origin, drop dropFunc, key string) {
	if !src.Set {
		return
	}
	if src.Value > dst.V {
		drop(src.Line, key, "%v is longer than %v (%s)", src.Value, dst.V, dst.Origin)
		return
	}
	*dst = value[time.Duration]{src.Value, at(src.Line)}
}

// describe names a candidate value: "read-only", or preset "safe" (read-only).
func describe(key string, p approval.Preset, v string) string {
	if key == "preset" {
		return fmt.Sprintf("preset %q (%s)", p, v)
	}
	return fmt.Sprintf("%q", v)
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// applyFlags puts the flags on top of every file, in both directions. A
// --preset sets mode and approval; --mode and --approval beat it.
func (c *config) applyFlags(f flagValues) {
	if f.preset != "" {
		p, o := approval.Preset(f.preset), flagOrigin("--preset")
		c.Preset = value[approval.Preset]{p, o}
		c.Mode = value[sandbox.Mode]{p.Mode(), o}
		c.Approval = value[approval.Policy]{p.Approval(), o}
	}
	if f.mode != "" {
		c.Mode = value[sandbox.Mode]{sandbox.Mode(f.mode), flagOrigin("--mode")}
	}
	if f.approval != "" {
		c.Approval = value[approval.Policy]{approval.Policy(f.approval), flagOrigin("--approval")}
	}
	if f.network != "" {
		c.Network = value[sandbox.Network]{sandbox.Network(f.network), flagOrigin("--network")}
	}
	if f.backend != "" {
		c.Backend = value[string]{f.backend, flagOrigin("--backend")}
	}
	if f.requirement != "" {
		c.Sandbox = value[sandbox.Requirement]{f.requirement, flagOrigin(f.requirementFlag)}
	}
	if f.approvalTimeout > 0 {
		c.ApprovalTimeout = value[time.Duration]{f.approvalTimeout, flagOrigin("--approval-timeout")}
	}
}

// finish derives the posture and the dangerous rules. Every input was
// validated, so an error here is a bug.
func (c *config) finish() error {
	st, err := approval.Derive(approval.Settings{Preset: c.Preset.V, Mode: c.Mode.V, Approval: c.Approval.V})
	if err != nil {
		return fmt.Errorf("bug: deriving the posture from validated settings: %w", err)
	}
	c.Derived = st
	extra, err := approval.ParseRules(c.DangerousCommands.values())
	if err != nil {
		return fmt.Errorf("bug: parsing validated dangerous_commands: %w", err)
	}
	c.Rules = append(approval.DefaultRules(), extra...)
	return nil
}

// presetOrigin is where the reported preset comes from: the layer that
// named it when it still holds, else it is derived from mode and approval
// (or the default when nothing was set).
func (c *config) presetOrigin() origin {
	switch {
	case c.Preset.V != "" && c.Derived.Preset == c.Preset.V:
		return c.Preset.Origin
	case c.Mode.Origin.Source == sourceDefault && c.Approval.Origin.Source == sourceDefault:
		return defaultOrigin
	}
	return origin{Source: sourceDerived}
}

// expandPaths turns config paths ("~/x", "/y") into clean absolute ones.
func expandPaths(list []string, home string) []string {
	out := make([]string, 0, len(list))
	for _, p := range list {
		out = append(out, expandPath(p, home))
	}
	return out
}

func expandPath(p, home string) string {
	if p == "" {
		return ""
	}
	return filepath.Clean(sandbox.ExpandHome(p, home))
}

// settingReport is one row of `cordon status`: a key, its effective value
// and where it came from.
type settingReport struct {
	Key     string        `json:"-"`
	Value   any           `json:"value"`
	Text    string        `json:"-"`
	Origin  origin        `json:"origin"`
	Entries []entryReport `json:"entries,omitempty"`
}

type entryReport struct {
	Value  string `json:"value"`
	Origin origin `json:"origin"`
}

// settings lists every effective value, in the order of SPEC §8.
func (c *config) settings() []settingReport {
	scalar := func(key string, v any, text string, o origin) settingReport {
		return settingReport{Key: key, Value: v, Text: text, Origin: o}
	}
	list := func(key string, l listValue) settingReport {
		r := settingReport{Key: key, Value: l.values(), Origin: l.Origin, Text: "(none)"}
		if len(l.Entries) > 0 {
			r.Text = strings.Join(l.values(), ", ")
		}
		for _, e := range l.Entries {
			r.Entries = append(r.Entries, entryReport{e.V, e.Origin})
		}
		return r
	}
	str := func(s string) string {
		if s == "" {
			return "(none)"
		}
		return s
	}
	return []settingReport{
		scalar("preset", c.Derived.Preset, string(c.Derived.Preset), c.presetOrigin()),
		scalar("mode", c.Derived.Mode, string(c.Derived.Mode), c.Mode.Origin),
		scalar("approval", c.Derived.Approval, string(c.Derived.Approval), c.Approval.Origin),
		scalar("sandbox", c.Sandbox.V, string(c.Sandbox.V), c.Sandbox.Origin),
		scalar("backend", c.Backend.V, c.Backend.V, c.Backend.Origin),
		scalar("network", c.Network.V, string(c.Network.V), c.Network.Origin),
		scalar("workspace", c.Workspace.V, c.Workspace.V, c.Workspace.Origin),
		scalar("state_dir", c.StateDir.V, c.StateDir.V, c.StateDir.Origin),
		scalar("fallback_root", c.FallbackRoot.V, str(c.FallbackRoot.V), c.FallbackRoot.Origin),
		list("extra_write_allow", c.ExtraWriteAllow),
		list("extra_read_deny", c.ExtraReadDeny),
		list("protected_paths", c.ProtectedPaths),
		list("env_passthrough", c.EnvPassthrough),
		list("dangerous_commands", c.DangerousCommands),
		scalar("approval_timeout", c.ApprovalTimeout.V.String(), c.ApprovalTimeout.V.String(), c.ApprovalTimeout.Origin),
		scalar("bash.timeout", c.BashTimeout.V.String(), c.BashTimeout.V.String(), c.BashTimeout.Origin),
		scalar("bash.max_output_chars", c.MaxOutputChars.V, fmt.Sprint(c.MaxOutputChars.V), c.MaxOutputChars.Origin),
		scalar("http.addr", c.HTTPAddr.V, str(c.HTTPAddr.V), c.HTTPAddr.Origin),
		list("http.allowed_origins", c.AllowedOrigins),
	}
}

// changes lists what differs between two configurations, as
// "key: old → new".
func changes(old, cur *config) []string {
	before := map[string]string{}
	for _, s := range old.settings() {
		before[s.Key] = s.Text
	}
	var out []string
	for _, s := range cur.settings() {
		if b := before[s.Key]; b != s.Text {
			out = append(out, fmt.Sprintf("%s: %s → %s", s.Key, b, s.Text))
		}
	}
	return out
}

// changed reports whether key differs between two configurations.
func changed(list []string, key string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return strings.HasPrefix(s, key+": ") })
}
