package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/cordonhq/cordon/internal/config"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/spf13/cobra"
)

func newExecCmd() *cobra.Command {
	var f sandboxFlags
	cmd := &cobra.Command{
		Use:   "exec [flags] -- CMD [ARGS...]",
		Short: "run one command confined, exactly as the bash tool would",
		Long: `Run one command confined exactly as the bash tool would: the same policy,
the same environment allowlist. stdin, stdout and stderr pass through and
cordon exits with the command's exit code; 125 when the sandbox cannot be
set up (nothing runs), 2 on a bad command line.

cordon's flags end at '--' or at the command, whose own flags pass through.`,
		Example: `  cordon exec -- ls -la
  cordon exec --mode read-only -- sh -c 'echo --help'`,
		Args: commandLine,
		RunE: func(cmd *cobra.Command, argv []string) error {
			return runExec(&f, argv, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.register(cmd, true)
	takesCommand(cmd)
	cmd.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveDefault
	}
	return cmd
}

// commandLine checks exec's CMD [ARGS...].
func commandLine(_ *cobra.Command, argv []string) error {
	if len(argv) == 0 {
		return syntaxf("no command given: cordon exec [flags] -- CMD [ARGS...]")
	}
	if argv[0] == "" {
		return syntaxf("the command is empty: cordon exec [flags] -- CMD [ARGS...]")
	}
	return nil
}

func runExec(f *sandboxFlags, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	d, err := f.resolve()
	if err != nil {
		return err
	}
	warn := func(msg string) { fmt.Fprintf(stderr, "cordon: warning: %s\n", msg) }
	d.warnings(warn)
	ex := d.executor(warn)
	if d.requirement == sandbox.Off {
		warn("the sandbox is off (" + config.Sandbox.Of(d.cfg).Origin.String() + "): the command runs unconfined")
	}

	recovered, _ := sandbox.RecoverGuards(d.settings.StateDir)
	reportUndone(stderr, recovered)
	tmp, err := sandbox.NewSessionTmp(d.settings.StateDir)
	if err != nil {
		fmt.Fprintf(stderr, "cordon: sandbox unavailable: session tmp: %v\n", err)
		return exitCode(exitSandbox)
	}
	defer tmp.Remove()
	set := d.settings
	set.ProgramTrees = sandbox.ProgramTrees(argv, set.Workspace)
	svc := sandbox.PolicyService{Settings: set}
	pol, err := svc.Resolve(sandbox.Request{TmpDir: tmp.Path})
	if err != nil {
		return err
	}
	return runToExit(ex, pol, sandbox.RunSpec{
		Argv: argv, Dir: pol.WorkspaceRoot, Env: sandbox.Environ(os.Environ(), d.passthrough),
		Stdin: stdin, Stdout: stdout, Stderr: stderr,
	})
}

// runToExit runs a command as exec and wrap do: in the foreground with
// cordon's signals forwarded, exiting with its code, 125 when the sandbox
// cannot be set up, 127 when an unconfined command is not found.
func runToExit(ex *sandbox.Executor, pol sandbox.ExecutionPolicy, spec sandbox.RunSpec) error {
	stderr := spec.Stderr
	var stop func()
	spec.Started = func(p *sandbox.Process) { stop = forwardSignals(p) }
	res, err := ex.Run(context.Background(), pol, spec)
	if stop != nil {
		stop()
	}
	argv := spec.Argv
	var ue *sandbox.UnavailableError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "cordon: sandbox unavailable: %s\n", ue.Reason)
		return exitCode(exitSandbox)
	case err != nil && res.Backend == "none" && errors.Is(err, exec.ErrNotFound):
		fmt.Fprintf(stderr, "cordon: %s: command not found\n", argv[0])
		return exitCode(127)
	case errors.As(err, new(*sandbox.NeverRanError)):
		fmt.Fprintf(stderr, "cordon: sandbox unavailable: %v\n", err)
		return exitCode(exitSandbox)
	case err != nil:
		fmt.Fprintf(stderr, "cordon: sandbox runner failed: %v\n", err)
		return exitCode(exitSandbox)
	case res.Ending == sandbox.RunnerFailed:
		fmt.Fprintf(stderr, "cordon: sandbox runner failed: %s\n", res.RunnerFailure)
		return exitCode(exitSandbox)
	}
	reportUndone(stderr, res.Undone)
	if res.Ending == sandbox.ProtectionLost {
		what := res.LostPath
		if what == "" {
			what = "a protected path"
		}
		fmt.Fprintf(stderr, "cordon: %s was replaced, removed or moved on the host while the command ran: the sandbox could not keep it protected and was killed (protection-lost)\n", what)
		return exitCode(exitSandbox)
	}
	if res.GuardErr != nil {
		fmt.Fprintf(stderr, "cordon: sandbox runner failed: restoring protected paths: %v\n", res.GuardErr)
		return exitCode(exitSandbox)
	}
	return exitWith(res.ExitCode)
}

// reportUndone tells the human what cordon undid after the command: its
// writes to protected paths, which no backend could refuse while it ran.
func reportUndone(w io.Writer, undone []sandbox.Change) {
	for _, c := range undone {
		if note := c.HostNote(); note != "" {
			fmt.Fprintf(w, "cordon: %s\n", note)
			continue
		}
		fmt.Fprintf(w, "cordon: undid what the command did to a protected path: %s\n", c)
	}
}

// trimUnavailable drops the "sandbox unavailable: " that UnavailableError
// already carries, since the caller prints its own.
func trimUnavailable(err error) string {
	var ue *sandbox.UnavailableError
	if errors.As(err, &ue) {
		return ue.Reason
	}
	return err.Error()
}

// forwardSignals passes SIGINT, SIGTERM and SIGHUP on to the runner while
// the command runs, so that cordon exec behaves like the command itself.
func forwardSignals(p *sandbox.Process) (stop func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-ch:
				p.Signal(s.(syscall.Signal))
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}
