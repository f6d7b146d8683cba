package winacl

import (
	"errors"
	"strings"
)

// Confinement is one command, confined: the runner's command line and
// environment, what it is not protected from, and the ACL entries that
// must exist before it starts (Apply, on Windows).
type Confinement struct {
	// Args are the runner's arguments: they follow cordon's executable
	// and the helper argument (sandbox.HelperArg).
	Args []string
	// Env replaces the variables of the same name in the command's
	// environment: the essential Windows variables, and the temp ones
	// pointed at the session tmp.
	Env []string
	// Unenforced names what this command is not protected from: the rules
	// of Limits its policy asks for, and the protected paths by name.
	Unenforced []string

	token Token
	plan  aclPlan
}

// Confine plans the confinement of argv under p, with the token d chose.
// The essential variables are taken from hostEnv (os.Environ()). Nothing
// is written to disk: Apply does that.
func Confine(p Policy, d Decision, argv, hostEnv []string) (*Confinement, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	plan, err := makePlan(p)
	if err != nil {
		return nil, err
	}
	runner := runnerConfig{token: d.Token, argv: argv}
	if d.Token == TokenRestricted {
		runner.sids = plan.TokenSIDs
	}
	return &Confinement{
		Args:       runner.args(),
		Env:        confinedEnv(hostEnv, p.TmpDir),
		Unenforced: unenforced(d, p, plan),
		token:      d.Token,
		plan:       plan,
	}, nil
}

// DenialSignatures are how Windows programs report the denial of
// a write: the Win32 message (cmd, Go, Python's WinError 5), .NET and
// PowerShell's UnauthorizedAccessException, and the POSIX wording of the
// MSYS2 / Git Bash tools and Node.
var DenialSignatures = []string{
	"Access is denied",
	"Access to the path",
	"Permission denied",
	"Operation not permitted",
}

// essentialEnv are variables without which common Windows programs
// fail (cmd.exe, PowerShell, git, the C runtime). None is a secret. The
// shared allowlist (sandbox/env.go) matches names case-sensitively and
// knows only Unix names, so the backend carries these itself; Windows
// names are case-insensitive, hence the lookup by EqualFold.
var essentialEnv = []string{
	"PATH", "PATHEXT", "SystemRoot", "windir", "ComSpec", "SystemDrive",
	"USERPROFILE", "HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA",
	"ProgramData", "ProgramFiles", "ProgramFiles(x86)", "ProgramW6432",
	"CommonProgramFiles", "CommonProgramFiles(x86)", "CommonProgramW6432",
	"NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "OS", "USERNAME",
}

// confinedEnv is a confined command's environment: the essential
// variables from host, and the temp variables pointed at the session tmp.
// The user's own %TEMP% is not writable under the restricted token, and
// GetTempPath reads TMP, then TEMP.
func confinedEnv(host []string, tmp string) []string {
	var env []string
	for _, name := range essentialEnv {
		for _, kv := range host {
			k, v, ok := strings.Cut(kv, "=")
			if ok && k != "" && strings.EqualFold(k, name) {
				env = append(env, name+"="+v)
				break
			}
		}
	}
	if tmp != "" {
		env = append(env, "TEMP="+tmp, "TMP="+tmp, "TMPDIR="+tmp)
	}
	return env
}
