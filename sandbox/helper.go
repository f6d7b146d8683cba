package sandbox

import "github.com/cordonhq/cordon/internal/helper"

// HelperArg is the hidden subcommand under which cordon re-executes itself
// as its confinement helper (internal/helper): main() must dispatch to
// RunHelper before doing anything else, so that the helper stays lean.
const HelperArg = helper.Arg

// SeccompRules describes, one line a rule, the filter a command runs
// under on the named backend with the given network setting and mode.
func SeccompRules(backend string, network Network, mode Mode) []string {
	o := helper.SeccompOptions{NetDeny: network == NetworkDeny, NetRestricted: network == NetworkRestricted}
	if backend == "landlock" {
		o.IPCDeny = true
		o.MetadataDeny = mode == ReadOnly
	}
	return helper.DescribeSeccomp(o)
}
