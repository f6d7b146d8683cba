package config

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cordonhq/cordon/approval"
)

// A layer is what one config file, or the command line, sets: a value for
// some keys.
type layer struct {
	path    string // the file; "" for the command line
	vals    map[key]layerValue
	secrets []SecretSpec // [secrets.NAME] tables (secrets.go)
}

type layerValue struct {
	v    any // the key's type: T for a Key[T], []string for a ListKey
	line int // the line of the key in the file
	flag string
}

// origin is where v came from, when the layer is source.
func (l *layer) origin(v layerValue, source Source) Origin {
	if source == SourceFlag {
		return FlagOrigin(v.flag)
	}
	return Origin{Source: source, File: l.path, Line: v.line}
}

// Sources say where the configuration comes from: the files to look for
// and the flags. Load can run again (SIGHUP) with the same sources.
type Sources struct {
	Home string
	// Workspace and StateDir are absolute, with where they came from.
	Workspace, StateDir Value[string]
	// Explicit is --config FILE, absolute; "" when not given.
	Explicit string
	Flags    Flags
}

// UserFile is the user's config file, where the human widens what cordon
// allows (an egress refusal names it).
func (s Sources) UserFile() string { return s.userFile() }

func (s Sources) userFile() string {
	return filepath.Join(DefaultConfigDir(s.Home), "config.toml")
}

func (s Sources) workspaceFiles() []string {
	return []string{filepath.Join(s.Workspace.V, "cordon.toml"), filepath.Join(s.Workspace.V, ".cordon", "config.toml")}
}

// Load reads every layer and applies the flags. Any problem in any file is
// an *Error that reports all of them, so that nothing runs half-configured.
func (s Sources) Load() (*Config, error) {
	c := defaultConfig()
	Workspace.replace(c, s.Workspace.V, s.Workspace.Origin)
	StateDir.replace(c, s.StateDir.V, s.StateDir.Origin)
	var problems []string
	read := func(name string, source Source) {
		data, err := readConfigFile(name)
		if errors.Is(err, errConfigMissing) {
			if source == SourceConfig {
				problems = append(problems, fmt.Sprintf("--config %s: no such file; check the path", name))
			}
			return
		}
		if err != nil {
			problems = append(problems, err.Error())
			return
		}
		l, err := parseFile(name, data)
		if err != nil {
			var ce *Error
			if errors.As(err, &ce) {
				problems = append(problems, ce.Problems...)
			} else {
				problems = append(problems, err.Error())
			}
			return
		}
		c.Files = append(c.Files, File{Path: name, Layer: source})
		if source == SourceWorkspace {
			c.tighten(l)
		} else {
			c.override(l, source)
		}
		c.applySecrets(l, source)
	}
	read(s.userFile(), SourceUser)
	for _, f := range s.workspaceFiles() {
		read(f, SourceWorkspace)
	}
	if s.Explicit != "" {
		read(s.Explicit, SourceConfig)
	}
	if len(problems) > 0 {
		return nil, &Error{problems}
	}
	c.override(&s.Flags.layer, SourceFlag)
	if err := c.finish(); err != nil {
		return nil, err
	}
	return c, nil
}

// override applies a trusted layer (the user's file, --config, the
// flags): every key it sets replaces the earlier value. A preset sets its
// mode and approval too, unless the layer sets them itself.
func (c *Config) override(l *layer, source Source) {
	for _, k := range keys {
		v, ok := l.vals[k]
		if !ok {
			continue
		}
		o := l.origin(v, source)
		k.replace(c, v.v, o)
		if k == key(Preset) {
			for _, part := range presetParts(v.v.(approval.Preset)) {
				if _, set := l.vals[part.key]; !set {
					part.key.replace(c, part.v, o)
				}
			}
		}
	}
}

// presetPart is one of the values a preset stands for.
type presetPart struct {
	key key
	v   any
}

func presetParts(p approval.Preset) []presetPart {
	return []presetPart{{Mode, p.Mode()}, {Approval, p.Approval()}}
}

// finish derives the posture and the dangerous rules; Preset then holds
// the preset to report. Every input was validated, so an error here is a
// bug.
func (c *Config) finish() error {
	named := Preset.Of(c)
	st, err := approval.Derive(approval.Settings{Preset: named.V, Mode: Mode.Get(c), Approval: Approval.Get(c)})
	if err != nil {
		return fmt.Errorf("bug: deriving the posture from validated settings: %w", err)
	}
	c.Derived = st
	extra, err := approval.ParseRules(DangerousCommands.Get(c))
	if err != nil {
		return fmt.Errorf("bug: parsing validated dangerous_commands: %w", err)
	}
	c.Rules = append(approval.DefaultRules(), extra...)
	// The reported preset comes from the layer that named it while it
	// still holds; else it is derived from mode and approval (or the
	// default, when neither was set).
	o := Origin{Source: SourceDerived}
	switch {
	case named.V != "" && st.Preset == named.V:
		o = named.Origin
	case Mode.Of(c).Origin.Source == SourceDefault && Approval.Of(c).Origin.Source == SourceDefault:
		o = defaultOrigin
	}
	Preset.replace(c, st.Preset, o)
	return nil
}
