package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
)

// stateDirFlag registers --state-dir and returns a resolver for it.
func stateDirFlag(fs *flag.FlagSet) func() string {
	dir := fs.String("state-dir", "", "state directory (default $XDG_STATE_HOME/cordon)")
	return func() string {
		if *dir != "" {
			abs, _ := filepath.Abs(*dir)
			return abs
		}
		home, err := os.UserHomeDir()
		if err != nil {
			home = "/"
		}
		return sandbox.DefaultStateDir(home)
	}
}

func sessionsDir(stateDir string) string { return filepath.Join(stateDir, "sessions") }

func parseOnly(fs *flag.FlagSet, args []string) (ok bool, code int) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return false, exitOK
		}
		return false, exitUsage
	}
	return true, 0
}

// runSessions lists sessions: id, start, workspace, effective mode, live.
func runSessions(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("sessions", stderr)
	stateDir := stateDirFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if ok, code := parseOnly(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return report(stderr, "sessions", usagef("unexpected argument %q", fs.Arg(0)))
	}
	list, err := sessionlog.List(sessionsDir(stateDir()))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return report(stderr, "sessions", err)
	}
	if *asJSON {
		if list == nil {
			list = []sessionlog.Summary{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(list)
		return exitOK
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
	return exitOK
}

// runLog prints a session's log readably, as JSON lines, or verifies it.
func runLog(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("log", stderr)
	stateDir := stateDirFlag(fs)
	verify := fs.Bool("verify", false, "check the hash chain; exit 1 naming the first bad line")
	asJSON := fs.Bool("json", false, "print the raw JSON lines")
	if ok, code := parseOnly(fs, args); !ok {
		return code
	}
	if fs.NArg() > 1 {
		return report(stderr, "log", usagef("give at most one session id"))
	}
	dir := sessionsDir(stateDir())
	id := fs.Arg(0)
	if id == "" {
		list, err := sessionlog.List(dir)
		if err != nil || len(list) == 0 {
			return report(stderr, "log", fmt.Errorf("no sessions under %s", dir))
		}
		sort.Slice(list, func(i, j int) bool { return list[i].Start.Before(list[j].Start) })
		id = list[len(list)-1].ID
	}
	if err := sessionlog.ValidateSessionID(id); err != nil {
		return report(stderr, "log", usagef("%v", err))
	}
	path := filepath.Join(dir, id+".jsonl")
	if *verify {
		if err := sessionlog.VerifyFile(path); err != nil {
			fmt.Fprintf(stderr, "cordon log: %s: %v\n", id, err)
			return exitFailure
		}
		events, _ := sessionlog.ReadFile(path)
		fmt.Fprintf(stdout, "%s: %d events, hash chain intact\n", id, len(events))
		return exitOK
	}
	if *asJSON {
		f, err := os.Open(path)
		if err != nil {
			return report(stderr, "log", err)
		}
		defer f.Close()
		io.Copy(stdout, f)
		return exitOK
	}
	events, err := sessionlog.ReadFile(path)
	if err != nil {
		return report(stderr, "log", err)
	}
	if err := sessionlog.Format(stdout, events); err != nil {
		return report(stderr, "log", err)
	}
	return exitOK
}

// runMode lets the human change a live session's mode from another
// terminal: a sandbox/mode event with source user, applied by the server
// from its next call on.
func runMode(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("mode", stderr)
	stateDir := stateDirFlag(fs)
	session := fs.String("session", "", "the session to change (see cordon sessions)")
	if ok, code := parseOnly(fs, args); !ok {
		return code
	}
	if *session == "" || fs.NArg() != 1 {
		return report(stderr, "mode", usagef("usage: cordon mode --session ID MODE"))
	}
	mode, err := sandbox.ParseMode(fs.Arg(0))
	if err != nil {
		return report(stderr, "mode", usagef("%v", err))
	}
	if err := sessionlog.ValidateSessionID(*session); err != nil {
		return report(stderr, "mode", usagef("--session: %v", err))
	}
	ev, err := sessionlog.AppendTo(sessionsDir(stateDir()), *session, sessionlog.EventSandboxMode,
		sessionlog.ModeData{Mode: string(mode), Source: sessionlog.SourceUser})
	if err != nil {
		return report(stderr, "mode", err)
	}
	fmt.Fprintf(stdout, "session %s: mode %s from its next call on (log line %d)\n", *session, mode, ev.Seq)
	return exitOK
}
