package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/sandbox"
)

// A workspace file may only tighten what the earlier layers (defaults and
// the user's file) set: each key's declaration names its rule, one of
// these. Anything else a workspace file tries is dropped, with a warning
// naming the file, line and key. A value equal to the current one is
// accepted (and reported as set by the workspace file).

// tighten applies a workspace file.
func (c *Config) tighten(l *layer) {
	first := len(c.Warnings)
	defer func() {
		mine := c.Warnings[first:]
		sort.SliceStable(mine, func(i, j int) bool { return mine[i].Line < mine[j].Line })
	}()
	drop := func(line int, key, why string) {
		c.Warnings = append(c.Warnings, Warning{File: l.path, Line: line, Key: key,
			Message: why + "; a workspace file may only tighten, so this was dropped (put it in your user config, --config or a flag if you mean it)"})
	}
	for _, k := range keys {
		v, ok := l.vals[k]
		if !ok {
			continue
		}
		o := l.origin(v, SourceWorkspace)
		if k == key(Preset) {
			c.tightenPreset(l, v, o, drop)
			continue
		}
		if why := k.tighten(c, v.v, strconv.Quote(fmt.Sprint(v.v)), o); why != "" {
			drop(v.line, k.decl().name, why)
		}
	}
}

// tightenPreset applies a workspace file's preset through its mode and
// approval: each part that widens is dropped, under the key "preset", and
// the file's explicit mode or approval beats its preset, as in a trusted
// layer. The preset is reported as the file's when a part of it applied,
// or when the file sets mode and approval too.
func (c *Config) tightenPreset(l *layer, v layerValue, o Origin, drop func(int, string, string)) {
	p := v.v.(approval.Preset)
	used, explicit := false, true
	for _, part := range presetParts(p) {
		if _, set := l.vals[part.key]; set {
			continue
		}
		explicit = false
		if why := part.key.tighten(c, part.v, fmt.Sprintf("preset %q (%s)", p, part.v), o); why != "" {
			drop(v.line, Preset.name, why)
		} else {
			used = true
		}
	}
	if used || explicit {
		Preset.replace(c, p, o)
	}
}

// narrowerMode: a workspace file may narrow the mode (sandbox.Mode order).
func narrowerMode(m sandbox.Mode, shown string, cur Value[sandbox.Mode]) string {
	if m.WiderThan(cur.V) {
		return fmt.Sprintf("%s would widen the mode from %s (%s)", shown, cur.V, cur.Origin)
	}
	return ""
}

// stricterApproval: a workspace file may make approval stricter.
func stricterApproval(p approval.Policy, shown string, cur Value[approval.Policy]) string {
	if p != cur.V && !p.StricterThan(cur.V) {
		return fmt.Sprintf("%s would loosen approval from %s (%s)", shown, cur.V, cur.Origin)
	}
	return ""
}

// requirementRank orders sandbox requirements by strictness. A function,
// not a map: a key's rule may not depend on a package variable (declare).
func requirementRank(r sandbox.Requirement) int {
	switch r {
	case sandbox.Auto:
		return 1
	case sandbox.Required:
		return 2
	}
	return 0
}

// strongerRequirement: off < auto < required.
func strongerRequirement(r sandbox.Requirement, shown string, cur Value[sandbox.Requirement]) string {
	if requirementRank(r) < requirementRank(cur.V) {
		return fmt.Sprintf("%s would weaken the sandbox requirement from %s (%s)", shown, cur.V, cur.Origin)
	}
	return ""
}

// narrowerNetwork: a workspace file may narrow the network (allow →
// restricted → deny), never widen it.
func narrowerNetwork(n sandbox.Network, shown string, cur Value[sandbox.Network]) string {
	if cur.V.Narrower(n) {
		return fmt.Sprintf("%s would open the network that %s sets to %s", shown, cur.Origin, cur.V)
	}
	return ""
}

// domainCovers reports whether allow-list entry have lets through
// everything entry e does: the same entry, or e beneath have's "*.".
func domainCovers(have, e string) bool {
	have, e = strings.ToLower(have), strings.ToLower(e)
	if have == e {
		return true
	}
	suffix, ok := strings.CutPrefix(have, "*.")
	if !ok {
		return false
	}
	return strings.HasSuffix(strings.TrimPrefix(e, "*."), "."+suffix)
}

// unchanged: a workspace file may not change the value at all, for why.
func unchanged(why string) rule[string] {
	return func(s, shown string, cur Value[string]) string {
		if s != cur.V {
			return fmt.Sprintf("%s would replace %q (%s): %s", shown, cur.V, cur.Origin, why)
		}
		return ""
	}
}

// shorter: a workspace file may shorten a timeout.
func shorter(d time.Duration, _ string, cur Value[time.Duration]) string {
	if d > cur.V {
		return fmt.Sprintf("%v is longer than %v (%s)", d, cur.V, cur.Origin)
	}
	return ""
}

// lower: a workspace file may lower a limit.
func lower(n int, _ string, cur Value[int]) string {
	if n > cur.V {
		return fmt.Sprintf("%d is larger than %d (%s)", n, cur.V, cur.Origin)
	}
	return ""
}
