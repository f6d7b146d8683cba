package config

import "fmt"

// Source is the layer a value came from, as `cordon status` names it.
type Source string

// The sources of a value.
const (
	SourceDefault   Source = "default"
	SourceUser      Source = "user"      // ~/.config/cordon/config.toml: may widen
	SourceWorkspace Source = "workspace" // the workspace's cordon.toml or .cordon/config.toml: may only tighten
	SourceConfig    Source = "config"    // --config FILE: trusted like the user's
	SourceFlag      Source = "flag"
	SourceDerived   Source = "derived" // computed from other settings (the reported preset)
	SourceCwd       Source = "cwd"     // the workspace, when --workspace is not given
)

// Origin says which layer set a value: a file and the line of its key, a
// flag, or nothing (the default).
type Origin struct {
	Source Source `json:"source"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Flag   string `json:"flag,omitempty"`
}

var defaultOrigin = Origin{Source: SourceDefault}

// FlagOrigin is the origin of a value given by the flag name ("--mode").
func FlagOrigin(name string) Origin { return Origin{Source: SourceFlag, Flag: name} }

// String is the origin as the text status prints it.
func (o Origin) String() string {
	switch o.Source {
	case SourceFlag:
		return "flag " + o.Flag
	case SourceUser:
		return "user file " + o.where()
	case SourceWorkspace:
		return "workspace file " + o.where()
	case SourceConfig:
		return "--config " + o.where()
	case SourceDerived:
		return "derived from mode and approval"
	case SourceCwd:
		return "current directory"
	}
	return string(o.Source)
}

func (o Origin) where() string { return fileLine(o.File, o.Line) }

// fileLine is FILE:LINE, or FILE when the line is unknown.
func fileLine(file string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return file
}
