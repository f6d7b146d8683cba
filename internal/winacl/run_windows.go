package winacl

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Run is the windows-acl runner: cordon, or the lean cordon-helper,
// executed as `__sandbox-helper --windows-acl …` (runnerConfig), with
// args the arguments after the helper argument. It joins a kill-on-close
// job, builds the restricted token and runs the command under it, and
// returns the command's exit code, or FailureExit with a FailurePrefix
// line on stderr when the sandbox could not be set up. It never runs the
// command with a token other than the one it was told to use.
func Run(args []string) int {
	fail := func(err error) int {
		fmt.Fprint(os.Stderr, failureLine(err))
		return FailureExit
	}
	cfg, err := parseRunnerArgs(args)
	if err != nil {
		return fail(err)
	}
	// The runner joins the job itself, before the command exists, so
	// every process the command starts is in it from its first
	// instruction. The handle is never closed: when the runner exits, or
	// is killed on a timeout, the job closes and takes the whole tree.
	if _, err := enterKillOnCloseJob(); err != nil {
		return fail(err)
	}
	var token windows.Token
	if cfg.token == TokenRestricted {
		if token, err = newRestrictedToken(cfg.sids); err != nil {
			return fail(err)
		}
	}
	path, err := exec.LookPath(cfg.argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "cordon: %s: command not found\n", cfg.argv[0])
		return 127
	}
	cmd := exec.Command(path, cfg.argv[1:]...)
	cmd.Args = cfg.argv
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = os.Environ()
	if token != 0 {
		// With a token, os/exec starts the command by CreateProcessAsUser;
		// a restricted version of the caller's own token needs no
		// privilege for that.
		cmd.SysProcAttr = &syscall.SysProcAttr{Token: syscall.Token(token)}
	}
	if err := cmd.Start(); err != nil {
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			return fail(fmt.Errorf("starting %s: %w", cfg.argv[0], err))
		}
		code, runnerFailed := startFailure(uint32(errno))
		if runnerFailed {
			return fail(fmt.Errorf("starting %s under the %s token: %w", cfg.argv[0], cfg.token, err))
		}
		fmt.Fprintf(os.Stderr, "cordon: %s: %v\n", cfg.argv[0], err)
		return code
	}
	if err := cmd.Wait(); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			return fail(fmt.Errorf("waiting for %s: %w", cfg.argv[0], err))
		}
	}
	code, failure := childExit(uint32(cmd.ProcessState.ExitCode()))
	if failure != "" {
		return fail(errors.New(failure))
	}
	return code
}

// enterKillOnCloseJob puts the calling process in a new job that kills
// all its processes when its last handle closes, refuses breakaway, and
// carries every UI restriction (jobUILimits).
func enterKillOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("creating the job object: %w", err)
	}
	var limits windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	limits.BasicLimitInformation.LimitFlags = jobKillOnJobClose | jobDieOnUnhandledException
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&limits)), uint32(unsafe.Sizeof(limits))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("setting the job's kill-on-close limit: %w", err)
	}
	ui := windows.JOBOBJECT_BASIC_UI_RESTRICTIONS{UIRestrictionsClass: jobUILimits}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectBasicUIRestrictions,
		uintptr(unsafe.Pointer(&ui)), uint32(unsafe.Sizeof(ui))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("setting the job's UI restrictions: %w", err)
	}
	if err := windows.AssignProcessToJobObject(job, windows.CurrentProcess()); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("joining the job object: %w", err)
	}
	return job, nil
}
