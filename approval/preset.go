package approval

import (
	"fmt"
	"strings"

	"github.com/cordonhq/cordon/sandbox"
)

// Preset names a pair of sandbox mode and approval policy, so that a human
// can choose a posture in one word.
type Preset string

// The presets. Custom is never chosen: it is what Derive reports when the
// effective mode or policy was set apart from a preset.
const (
	// Safe: read-only, and ask before dangerous commands.
	Safe Preset = "safe"
	// Review, the default: workspace-write, and ask before dangerous
	// commands.
	Review Preset = "review"
	// Danger: danger-full-access, and never ask.
	Danger Preset = "danger"
	// Custom is reported, not chosen: mode or approval differ from any
	// preset's values.
	Custom Preset = "custom"
)

// DefaultPreset is the preset that applies when nothing was configured.
const DefaultPreset = Review

// Presets lists the presets a human can choose, narrowest first.
var Presets = []Preset{Safe, Review, Danger}

// presetValues pins each choosable preset to its mode and policy; the SPEC's
// preset table, as data.
var presetValues = map[Preset]struct {
	mode     sandbox.Mode
	approval Policy
}{
	Safe:   {sandbox.ReadOnly, AskDangerous},
	Review: {sandbox.WorkspaceWrite, AskDangerous},
	Danger: {sandbox.DangerFullAccess, Never},
}

// ParsePreset accepts exactly the names of the choosable presets. "custom"
// is refused with a hint, because it is the name of a result, not a setting.
func ParsePreset(s string) (Preset, error) {
	if p := Preset(s); p.Valid() {
		return p, nil
	}
	if Preset(s) == Custom {
		return "", fmt.Errorf("preset %q cannot be chosen: it is reported when mode or approval are set apart from a preset; set mode and approval instead", s)
	}
	return "", fmt.Errorf("unknown preset %q: use one of %s", s, presetNames())
}

func presetNames() string {
	names := make([]string, len(Presets))
	for i, p := range Presets {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

// Valid reports whether p is a preset a human can choose (not Custom).
func (p Preset) Valid() bool {
	_, ok := presetValues[p]
	return ok
}

// Mode is the sandbox mode of the preset; empty for Custom or an unknown
// name.
func (p Preset) Mode() sandbox.Mode { return presetValues[p].mode }

// Approval is the approval policy of the preset; empty for Custom or an
// unknown name.
func (p Preset) Approval() Policy { return presetValues[p].approval }

// String is the preset's name, as the config and flags spell it.
func (p Preset) String() string { return string(p) }

// Settings is what the human configured, after the configuration layers and
// flags were merged. An empty field means "not set".
type Settings struct {
	Preset   Preset
	Mode     sandbox.Mode
	Approval Policy
}

// DerivedState is the deployment's effective posture: the mode and policy
// that apply, and the preset name to report in sandbox_status and the
// server's instructions.
type DerivedState struct {
	Mode     sandbox.Mode
	Approval Policy
	Preset   Preset
}

// Derive computes the effective posture from s. The rules, in order:
//
//  1. The base preset is s.Preset, or DefaultPreset (review) when none was
//     given.
//  2. The effective mode is s.Mode when set, else the base preset's mode;
//     the effective approval is s.Approval when set, else the base preset's
//     policy. An explicit value always beats the preset.
//  3. The reported preset:
//     - when a preset was named, that preset if the effective mode and
//     approval both equal its values, else Custom (review + read-only is
//     custom, even though the pair happens to be safe's: the human asked
//     for review and then changed it);
//     - when no preset was named, the preset whose values equal the
//     effective pair (nothing set is review; workspace-write +
//     ask-dangerous is review too), else Custom.
//
// Setting a value to the one the preset already has does not make the
// result custom. An invalid preset (including "custom"), mode or policy is
// an error.
func Derive(s Settings) (DerivedState, error) {
	if s.Preset != "" {
		if _, err := ParsePreset(string(s.Preset)); err != nil {
			return DerivedState{}, err
		}
	}
	if s.Mode != "" {
		if _, err := sandbox.ParseMode(string(s.Mode)); err != nil {
			return DerivedState{}, err
		}
	}
	if s.Approval != "" {
		if _, err := ParsePolicy(string(s.Approval)); err != nil {
			return DerivedState{}, err
		}
	}

	base := s.Preset
	if base == "" {
		base = DefaultPreset
	}
	st := DerivedState{Mode: base.Mode(), Approval: base.Approval()}
	if s.Mode != "" {
		st.Mode = s.Mode
	}
	if s.Approval != "" {
		st.Approval = s.Approval
	}

	st.Preset = Custom
	if s.Preset != "" {
		if matches(s.Preset, st) {
			st.Preset = s.Preset
		}
		return st, nil
	}
	for _, p := range Presets {
		if matches(p, st) {
			st.Preset = p
			break
		}
	}
	return st, nil
}

// matches reports whether st is exactly preset p's mode and policy.
func matches(p Preset, st DerivedState) bool {
	return p.Mode() == st.Mode && p.Approval() == st.Approval
}
