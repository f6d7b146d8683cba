package main

import "fmt"

// Where a setting's value came from, as `cordon status` reports it.
const (
	sourceDefault   = "default"
	sourceUser      = "user"      // ~/.config/cordon/config.toml: may widen
	sourceWorkspace = "workspace" // the workspace's cordon.toml or .cordon/config.toml: may only tighten
	sourceConfig    = "config"    // --config FILE: trusted like the user's
	sourceFlag      = "flag"
	sourceDerived   = "derived" // computed from other settings (the reported preset)
	sourceCwd       = "cwd"     // the workspace, when --workspace is not given
)

// origin says which layer set a value: a file and the line of its key, a
// flag, or nothing (the default).
type origin struct {
	Source string `json:"source"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Flag   string `json:"flag,omitempty"`
}

var defaultOrigin = origin{Source: sourceDefault}

func flagOrigin(name string) origin { return origin{Source: sourceFlag, Flag: name} }

// String is the origin as the text status prints it.
func (o origin) String() string {
	switch o.Source {
	case sourceFlag:
		return "flag " + o.Flag
	case sourceUser:
		return "user file " + o.where()
	case sourceWorkspace:
		return "workspace file " + o.where()
	case sourceConfig:
		return "--config " + o.where()
	case sourceDerived:
		return "derived from mode and approval"
	case sourceCwd:
		return "current directory"
	}
	return o.Source
}

func (o origin) where() string { return fileLine(o.File, o.Line) }

// fileLine is FILE:LINE, or FILE when the line is unknown.
func fileLine(file string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return file
}
