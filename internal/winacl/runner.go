package winacl

import (
	"errors"
	"fmt"
)

// The runner is cordon itself, re-executed, or the lean cordon-helper
// beside it:
//
//	cordon __sandbox-helper --windows-acl --token restricted [--sid SID]... -- CMD [ARGS...]
//
// It makes the token, joins a kill-on-close job and starts the command.
// runnerFlag tells its arguments from the Linux helper's.
const runnerFlag = "--windows-acl"

// runnerConfig is what the runner is told on its command line.
type runnerConfig struct {
	token Token
	sids  []string // grant SIDs to add as restricting SIDs
	argv  []string
}

// args renders the config as the runner's command line (after the
// helper argument).
func (c runnerConfig) args() []string {
	a := []string{runnerFlag, "--token", string(c.token)}
	for _, s := range c.sids {
		a = append(a, "--sid", s)
	}
	a = append(a, "--")
	return append(a, c.argv...)
}

// parseRunnerArgs reads args(). It accepts only cordon's own
// grant SIDs: the runner is never a general "run with these SIDs" tool.
func parseRunnerArgs(args []string) (runnerConfig, error) {
	var c runnerConfig
	if len(args) == 0 || args[0] != runnerFlag {
		return c, fmt.Errorf("the windows-acl runner needs %s first", runnerFlag)
	}
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "--":
			c.argv = args[i+1:]
			if len(c.argv) == 0 {
				return c, errors.New("no command after --")
			}
			if c.token == "" {
				return c, errors.New("--token is required")
			}
			return c, nil
		case "--token", "--sid":
			flag := args[i]
			if i+1 >= len(args) {
				return c, fmt.Errorf("%s needs a value", flag)
			}
			i++
			v := args[i]
			if flag == "--sid" {
				if !validGrantSID(v) {
					return c, fmt.Errorf("--sid: %q is not a cordon grant SID", v)
				}
				c.sids = append(c.sids, v)
				continue
			}
			switch Token(v) {
			case TokenRestricted, TokenCurrent:
				c.token = Token(v)
			default:
				return c, fmt.Errorf("--token: unknown token %q (restricted or current)", v)
			}
		default:
			return c, fmt.Errorf("unknown runner argument %q", args[i])
		}
	}
	return c, errors.New("missing -- before the command")
}

// The runner reports its own failure as a line on stderr that begins
// with FailurePrefix, and exits FailureExit. There is no status pipe on
// Windows (exec.Cmd cannot pass extra descriptors there), so the two are
// the only signal: sandbox makes its runner failure rule of them.
const (
	FailureExit   = 125
	FailurePrefix = "cordon: sandbox runner failed"
)

// failureLine is the runner's report of err.
func failureLine(err error) string { return FailurePrefix + ": " + err.Error() + "\n" }

// Windows errors and statuses the runner tells apart.
const (
	errorFileNotFound      = 2
	errorPathNotFound      = 3
	errorAccessDenied      = 5
	errorBadExeFormat      = 193
	errorElevationRequired = 740
	statusDLLInitFailed    = 0xC0000142
)

// startFailure maps the error of starting the command to the
// runner's exit code, shell-style: 127 not found, 126 found but not
// runnable. Anything else means the sandbox could not start it: a runner
// failure (FailureExit).
func startFailure(errno uint32) (code int, runnerFailure bool) {
	switch errno {
	case errorFileNotFound, errorPathNotFound:
		return 127, false
	case errorAccessDenied, errorBadExeFormat, errorElevationRequired:
		return 126, false
	}
	return FailureExit, true
}

// childExit maps the command's exit status to the runner's exit
// code. STATUS_DLL_INIT_FAILED is what a program that cannot initialise
// under the restricted token dies with (typically: it needed a new console
// or desktop access it was not given): the sandbox kept it from starting,
// so it is reported as a runner failure, not as the command's exit.
func childExit(status uint32) (code int, failure string) {
	if status == statusDLLInitFailed {
		return FailureExit, "the command could not initialise under the restricted token (STATUS_DLL_INIT_FAILED 0xC0000142)"
	}
	return int(status), ""
}
