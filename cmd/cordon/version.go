package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version and commit are set at build time with -ldflags "-X
// main.version=… -X main.commit=…" (make build, make release). A `go
// install …@vX` build has neither, and takes the module's version and the
// VCS revision Go recorded instead.
var (
	version = "dev"
	commit  = ""
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "cordon's version, revision, platform and Go version",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return syntaxf("takes no arguments")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			return nil
		},
	}
}

// versionLine is what `cordon version` and `cordon --version` print.
func versionLine() string {
	v, rev := version, commit
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && rev == "" {
				rev = s.Value
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		rev = " (" + rev + ")"
	}
	return fmt.Sprintf("cordon %s%s %s/%s %s", v, rev, runtime.GOOS, runtime.GOARCH, runtime.Version())
}
