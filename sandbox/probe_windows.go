package sandbox

import "github.com/cordonhq/cordon/internal/winacl"

func probeCommands(marker, canary string) (permissive, write []string) {
	return winacl.ProbeArgv(marker, canary)
}
