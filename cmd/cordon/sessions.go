package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/cordonhq/cordon/internal/config"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
	"github.com/spf13/cobra"
)

// stateDirFlag registers --state-dir and returns a resolver for it.
func stateDirFlag(cmd *cobra.Command) func() string {
	dir := cmd.Flags().String("state-dir", "", "state directory `DIR` (default $XDG_STATE_HOME/cordon)")
	completeDirs(cmd, "state-dir")
	return func() string { return resolveStateDir(*dir) }
}

// resolveStateDir is dir made absolute, or the default state directory.
func resolveStateDir(dir string) string {
	if dir != "" {
		abs, _ := filepath.Abs(dir)
		return abs
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = "/"
	}
	return config.DefaultStateDir(home)
}

func sessionsDir(stateDir string) string { return filepath.Join(stateDir, "sessions") }

func newSessionsCmd() *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "sessions [flags]",
		Short: "list sessions and their effective modes",
		Args:  noArgs,
	}
	stateDir := stateDirFlag(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&all, "all", false, "also list ended sessions that made no tool call (a client's health check)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runSessions(stateDir(), asJSON, all, cmd.OutOrStdout())
	}
	return cmd
}

// runSessions lists sessions: id, start, workspace, effective mode, live.
// An ended session that made no call is a client's health check (every
// `claude mcp list` connects and leaves): listed only with all.
func runSessions(stateDir string, asJSON, all bool, stdout io.Writer) error {
	list, err := sessionlog.List(sessionsDir(stateDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if !all {
		list = slices.DeleteFunc(list, func(s sessionlog.Summary) bool {
			return !s.Live && s.Calls == 0 && s.Error == "" && s.Events <= 2
		})
	}
	if asJSON {
		if list == nil {
			list = []sessionlog.Summary{}
		}
		writeJSON(stdout, list)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tSTARTED\tMODE\tSTATE\tWORKSPACE")
	for _, s := range list {
		state := "ended"
		if s.Live {
			state = "live"
		}
		if s.Error != "" {
			state = "corrupt"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, s.Start.Local().Format(time.DateTime), s.Mode, state, s.Workspace)
	}
	tw.Flush()
	return nil
}

// logFlags are log's flags.
type logFlags struct {
	stateDir     func() string
	verify, json bool
}

func newLogCmd() *cobra.Command {
	var f logFlags
	cmd := &cobra.Command{
		Use:   "log [SESSION] [flags]",
		Short: "show or verify a session log (the newest session by default)",
		Example: `  cordon log
  cordon log ID --verify
  cordon log --json ID`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return syntaxf("give at most one session id")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			return runLog(f, id, cmd.OutOrStdout())
		},
	}
	f.stateDir = stateDirFlag(cmd)
	cmd.Flags().BoolVar(&f.verify, "verify", false, "check the hash chain; exit 1 naming the first bad line")
	cmd.Flags().BoolVar(&f.json, "json", false, "print the raw JSON lines")
	sessions := completeSessions(f.stateDir)
	cmd.ValidArgsFunction = func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return sessions(c, args, toComplete)
	}
	return cmd
}

// runLog prints a session's log readably, as JSON lines, or verifies it.
func runLog(f logFlags, id string, stdout io.Writer) error {
	dir := sessionsDir(f.stateDir())
	if id == "" {
		list, err := sessionlog.List(dir)
		if err != nil || len(list) == 0 {
			return fmt.Errorf("no sessions under %s", dir)
		}
		sort.Slice(list, func(i, j int) bool { return list[i].Start.Before(list[j].Start) })
		id = list[len(list)-1].ID
	}
	if err := sessionlog.ValidateSessionID(id); err != nil {
		return usagef("%v", err)
	}
	path := filepath.Join(dir, id+".jsonl")
	if err := sessionExists(dir, id); err != nil {
		return err
	}
	if f.verify {
		if err := sessionlog.VerifyFile(path); err != nil {
			return fmt.Errorf("%s: %v", id, err)
		}
		events, _ := sessionlog.ReadFile(path)
		fmt.Fprintf(stdout, "%s: %d events, hash chain intact\n", id, len(events))
		return nil
	}
	if f.json {
		file, err := os.Open(path)
		if err != nil {
			return err
		}
		defer file.Close()
		io.Copy(stdout, file)
		return nil
	}
	events, err := sessionlog.ReadFile(path)
	if err != nil {
		return err
	}
	return sessionlog.Format(stdout, events)
}

func newModeCmd() *cobra.Command {
	var session string
	cmd := &cobra.Command{
		Use:   "mode --session ID MODE",
		Short: "change a live session's mode (source: user)",
		Long: `Change a live session's mode from another terminal: the server applies it
from the session's next call on, recorded in its log with source user.`,
		Example: `  cordon mode --session ID workspace-write
  cordon mode read-only --session ID`,
		Args: func(_ *cobra.Command, args []string) error {
			if session == "" || len(args) != 1 {
				return syntaxf("usage: cordon mode --session ID MODE")
			}
			return nil
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return modeNames, cobra.ShellCompDirectiveNoFileComp
		},
	}
	stateDir := stateDirFlag(cmd)
	cmd.Flags().StringVar(&session, "session", "", "the session `ID` to change (see cordon sessions)")
	cmd.RegisterFlagCompletionFunc("session", completeSessions(stateDir))
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return runMode(stateDir(), session, args[0], cmd.OutOrStdout())
	}
	return cmd
}

// runMode lets the human change a live session's mode from another
// terminal: a sandbox/mode event with source user, applied by the server
// from its next call on.
func runMode(stateDir, session, arg string, stdout io.Writer) error {
	mode, err := sandbox.ParseMode(arg)
	if err != nil {
		return usagef("%v", err)
	}
	if err := sessionlog.ValidateSessionID(session); err != nil {
		return usagef("--session: %v", err)
	}
	dir := sessionsDir(stateDir)
	if err := sessionExists(dir, session); err != nil {
		return err
	}
	// An ended session has no next call: recording a mode there would
	// say it changed something while nothing can apply it.
	live, err := sessionlog.IsLive(dir, session)
	if err != nil {
		return err
	}
	if !live {
		return fmt.Errorf("session %s has ended, so no call of it will run again: start a new session with --mode %s instead ('cordon sessions' lists the live ones)", session, mode)
	}
	ev, err := sessionlog.AppendTo(dir, session, sessionlog.EventSandboxMode,
		sessionlog.ModeData{Mode: string(mode), Source: sessionlog.SourceUser})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "session %s: mode %s from its next call on (log line %d)\n", session, mode, ev.Seq)
	return nil
}

// sessionExists says, in words a human can act on, that a session id names
// no session here.
func sessionExists(dir, id string) error {
	if _, err := os.Stat(filepath.Join(dir, id+".jsonl")); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no session %s under %s: 'cordon sessions' lists the sessions there (or give --state-dir)", id, dir)
		}
		return err
	}
	return nil
}
