package winacl

// ProbeArgv are the probe's two commands for Windows, where
// there is neither `true` nor /bin/sh: a permissive run, and a write to
// marker then an append to canary. A failed redirection does not set
// cmd.exe's ERRORLEVEL but does trigger ||, hence the explicit exit 1.
// echo writes "ok" plus CRLF: compare the marker with its space trimmed.
func ProbeArgv(marker, canary string) (permissive, write []string) {
	permissive = []string{"cmd.exe", "/d", "/c", "exit", "0"}
	write = []string{"cmd.exe", "/d", "/c", "echo", "ok>", marker, "&", "echo", "breach>>", canary, "||", "exit", "1"}
	return permissive, write
}
