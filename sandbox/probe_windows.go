package sandbox

func probeCommands(marker, canary string) (permissive, write []string) {
	return windowsACLProbeArgv(marker, canary)
}
