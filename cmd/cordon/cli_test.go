//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/cordonhq/cordon/sessionlog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commands are every command a user can name (help aside).
var commands = []string{"serve", "exec", "status", "profile", "test", "log", "sessions", "mode", "client-config", "completion", "version"}

// newSession makes a session log under state, as serve would, live until
// the test ends.
func newSession(t *testing.T, state, ws string) string {
	t.Helper()
	id := sessionlog.NewSessionID()
	l, err := sessionlog.Create(sessionsDir(state), id, sessionlog.StartInfo{Workspace: ws, Mode: "workspace-write"})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return id
}

// TestSessionCommandsNameTheSession: log and mode on a session that does
// not exist say so and how to find one; mode on an ended session refuses
// rather than record a change nothing will apply.
func TestSessionCommandsNameTheSession(t *testing.T) {
	ws, state := workspace(t)
	dir := sessionsDir(state)
	for _, args := range [][]string{
		{"log", "--state-dir", state, "no-such-session"},
		{"log", "--verify", "--state-dir", state, "no-such-session"},
		{"mode", "--state-dir", state, "--session", "no-such-session", "read-only"},
	} {
		r := cordon(t, nil, ws, args...)
		assert.Equal(t, exitFailure, r.code, args)
		assert.Contains(t, r.stderr, "no session no-such-session under "+dir+": 'cordon sessions' lists the sessions there (or give --state-dir)", args)
		assert.NotContains(t, r.stderr, "open /", "no raw Go error")
	}

	id := sessionlog.NewSessionID()
	l, err := sessionlog.Create(dir, id, sessionlog.StartInfo{Workspace: ws, Mode: "read-only"})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	r := cordon(t, nil, ws, "mode", "--state-dir", state, "--session", id, "danger-full-access")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "session "+id+" has ended, so no call of it will run again: start a new session with --mode danger-full-access instead")
	events, err := sessionlog.ReadFile(filepath.Join(dir, id+".jsonl"))
	require.NoError(t, err)
	assert.Len(t, events, 1, "nothing was recorded")
}

// TestVersionFlag: --version prints what `cordon version` prints.
func TestVersionFlag(t *testing.T) {
	ws, _ := workspace(t)
	flag, cmd := cordon(t, nil, ws, "--version"), cordon(t, nil, ws, "version")
	require.Equal(t, 0, flag.code, flag.stderr)
	assert.Equal(t, cmd.stdout, flag.stdout)
	assert.Regexp(t, `^cordon \S+`, flag.stdout)
}

// TestFlagsAnywhere: on every command, flags may come before or after the
// positional arguments, in any order, with one dash or two, and "--" ends
// them; each spelling of a command line does what the first one does.
func TestFlagsAnywhere(t *testing.T) {
	ws, state := workspace(t)
	id := newSession(t, state, ws)
	cases := []struct {
		name      string
		spellings [][]string
		code      int
		stdout    string // a part of stdout
		stderr    string // a part of stderr
	}{
		{"log verify", [][]string{
			{"log", "--state-dir", state, "--verify", id},
			{"log", id, "--verify", "--state-dir", state},
			{"log", "--verify", id, "--state-dir=" + state},
			{"log", "-verify", id, "-state-dir", state},
			{"log", "--state-dir", state, "--verify", "--", id},
		}, 0, id + ": 1 events, hash chain intact", ""},
		{"log json", [][]string{
			{"log", "--json", id, "--state-dir", state},
			{"log", id, "--state-dir", state, "--json"},
		}, 0, `"type":"session/start"`, ""},
		{"mode", [][]string{
			{"mode", "--state-dir", state, "--session", id, "read-only"},
			{"mode", "read-only", "--session", id, "--state-dir", state},
			{"mode", "--session=" + id, "read-only", "--state-dir", state},
		}, 0, "session " + id + ": mode read-only from its next call on", ""},
		{"sessions", [][]string{
			{"sessions", "--json", "--state-dir", state},
			{"sessions", "--state-dir", state, "--json"},
			{"sessions", "-json", "-state-dir", state},
		}, 0, `"id": "` + id + `"`, ""},
		{"status", [][]string{
			{"status", "--json", "--backend", "landlock", "--state-dir", state, "--mode", "read-only"},
			{"status", "--mode=read-only", "--state-dir", state, "--backend=landlock", "--json"},
			{"status", "-mode", "read-only", "-json", "-backend", "landlock", "-state-dir", state},
		}, 0, `"mode": "read-only"`, ""},
		{"profile", [][]string{
			{"profile", "--json", "--backend", "landlock", "--mode", "read-only", "--state-dir", state, "--", "ls", "-la"},
			{"profile", "--mode", "read-only", "--state-dir", state, "--json", "--backend", "landlock", "ls", "-la"},
		}, 0, `"ls",` + "\n" + `    "-la"`, ""},
		{"test", [][]string{
			{"test", "--backend", "landlock", "--state-dir", state},
			{"test", "--state-dir", state, "--backend", "landlock"},
		}, 0, "contained: backend landlock", ""},
		{"serve", [][]string{
			{"serve", "--state-dir", state, "--log-level", "loud"},
			{"serve", "--log-level=loud", "--state-dir", state},
		}, exitUsage, "", `--log-level "loud": use debug, info, warn or error`},
		{"completion", [][]string{
			{"completion", "bash"},
			{"completion", "--", "bash"},
		}, 0, "__start_cordon", ""},
		// exec's command line starts at its first argument: CMD's flags,
		// even --help, are CMD's.
		{"exec", [][]string{
			{"exec", "--mode", "read-only", "--state-dir", state, "--", "sh", "-c", "echo --help --mode"},
			{"exec", "--state-dir", state, "--mode=read-only", "sh", "-c", "echo --help --mode"},
			{"exec", "-mode", "read-only", "-state-dir", state, "sh", "-c", "echo --help --mode"},
		}, 0, "--help --mode\n", ""},
		{"exec ls -la", [][]string{
			{"exec", "--state-dir", state, "--", "ls", "-la", ws},
			{"exec", "--state-dir", state, "ls", "-la", ws},
		}, 0, "..\n", ""},
		{"exec exit code", [][]string{
			{"exec", "--state-dir", state, "--", "sh", "-c", "exit 3", "--state-dir"},
			{"exec", "--state-dir", state, "sh", "-c", "exit 3", "--state-dir"},
		}, 3, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, args := range c.spellings {
				r := cordon(t, nil, ws, args...)
				assert.Equal(t, c.code, r.code, "%q: %s", args, r.stderr)
				assert.Contains(t, r.stdout, c.stdout, "%q", args)
				assert.Contains(t, r.stderr, c.stderr, "%q", args)
			}
		})
	}
}

// TestFlagsKeepTheirOrigin: a flag after the positional arguments is a
// flag like any other: it outranks the config, with origin "flag".
func TestFlagsKeepTheirOrigin(t *testing.T) {
	e := newCfgEnv(t)
	e.write(t, e.userFile(), "mode = \"read-only\"\nsandbox = \"off\"\n")
	r := e.run(t, nil, "exec", "--sandbox-required", "--mode=workspace-write", "--", "touch", filepath.Join(e.ws, "a"))
	assert.Equal(t, 0, r.code, r.stderr)
	assert.FileExists(t, filepath.Join(e.ws, "a"))
	st := e.status(t, "--json", "--sandbox-required", "--mode=workspace-write")
	for key, want := range map[string]string{"mode": "--mode", "sandbox": "--sandbox-required"} {
		_, o := setting(st, key)
		assert.Equal(t, map[string]any{"source": "flag", "flag": want}, o, key)
	}
	for _, args := range [][]string{{"--sandbox", "--no-sandbox"}, {"--sandbox-required", "--sandbox=true"}, {"-sandbox", "-no-sandbox"}} {
		r := e.run(t, nil, "status", args...)
		assert.Equal(t, exitUsage, r.code, "%q", args)
		assert.Contains(t, r.stderr, "--sandbox, --no-sandbox and --sandbox-required are mutually exclusive: give one")
	}
	// A boolean flag given false is not given.
	st = e.status(t, "--json", "--no-sandbox=false")
	assert.Equal(t, "off", st["sandbox"])
	_, o := setting(st, "sandbox")
	assert.Equal(t, "user", o["source"])
}

// TestHelpEverywhere: --help, -h and `cordon help COMMAND` print the
// command's usage on stdout and exit 0, whatever else is on the line.
func TestHelpEverywhere(t *testing.T) {
	for _, name := range commands {
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}, {name, "-help"}} {
			r := cordon(t, nil, "", args...)
			assert.Equal(t, 0, r.code, "%q: %s", args, r.stderr)
			assert.Contains(t, r.stdout, "Usage:\n  cordon "+name, "%q", args)
			assert.Empty(t, r.stderr, "%q", args)
		}
	}
	for _, args := range [][]string{{"exec", "--mode", "read-only", "--help"}, {"log", "ID", "--help"}, {"mode", "--help", "read-only"}} {
		r := cordon(t, nil, "", args...)
		assert.Equal(t, 0, r.code, "%q: %s", args, r.stderr)
		assert.Contains(t, r.stdout, "Usage:\n  cordon "+args[0], "%q", args)
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		r := cordon(t, nil, "", args...)
		assert.Equal(t, 0, r.code, "%q", args)
		assert.Equal(t, usage, r.stdout, "%q", args)
	}
	r := cordon(t, nil, "")
	assert.Equal(t, exitUsage, r.code, "a bare cordon is a usage error")
	assert.Equal(t, usage, r.stderr)
	assert.Empty(t, r.stdout)
}

// TestUsageErrors: a bad command line exits 2 and says what was wrong and
// what to do; nothing runs.
func TestUsageErrors(t *testing.T) {
	ws, state := workspace(t)
	marker := filepath.Join(ws, "ran")
	for _, name := range commands {
		r := cordon(t, nil, ws, name, "--frobnicate")
		assert.Equal(t, exitUsage, r.code, name)
		assert.Contains(t, r.stderr, "cordon "+name+": unknown flag --frobnicate\n"+
			"Run 'cordon "+name+" --help' for usage.\n", name)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"exec", "--state-dir", state, "--mode", "--", "touch", marker}, `--mode: unknown mode "--"`},
		{[]string{"exec", "--state-dir", state, "--frobnicate", "touch", marker}, "unknown flag --frobnicate"},
		{[]string{"exec", "--state-dir", state, "-x", "--", "touch", marker}, "unknown flag -x"},
		{[]string{"exec", "--state-dir"}, "flag needs an argument: --state-dir\nRun 'cordon exec --help' for usage."},
		{[]string{"status", "--json=maybe"}, `invalid argument "maybe" for "--json" flag`},
		{[]string{"serve", "--approval-timeout", "soon"}, `invalid argument "soon" for "--approval-timeout" flag`},
		{[]string{"serve", "stdio"}, `cordon serve: unexpected argument "stdio"`},
		{[]string{"status", "bwrap"}, `cordon status: unexpected argument "bwrap"`},
		{[]string{"sessions", "all"}, `cordon sessions: unexpected argument "all"`},
		{[]string{"test", "landlock"}, `cordon test: unexpected argument "landlock"`},
		{[]string{"log", "a", "b"}, "cordon log: give at most one session id\nRun 'cordon log --help' for usage."},
		{[]string{"log", "--state-dir", state, "../x"}, "cordon log: "},
		{[]string{"mode", "read-only"}, "cordon mode: usage: cordon mode --session ID MODE"},
		{[]string{"mode", "--session", "x"}, "cordon mode: usage: cordon mode --session ID MODE"},
		{[]string{"mode", "--session", "x", "everything", "--state-dir", state}, `cordon mode: unknown mode "everything"`},
		{[]string{"version", "2"}, "cordon version: takes no arguments"},
		{[]string{"completion"}, "cordon completion: give one shell: bash, zsh, fish, powershell"},
		{[]string{"completion", "tcsh"}, `cordon completion: unknown shell "tcsh": use one of bash, zsh, fish, powershell`},
		{[]string{"statsu"}, `cordon: unknown command "statsu" (did you mean "status"?); 'cordon --help' lists the commands`},
		{[]string{"help", "statsu"}, `cordon help: unknown command "statsu" (did you mean "status"?)`},
		{[]string{"--frobnicate"}, "cordon: unknown flag --frobnicate"},
	}
	for _, c := range cases {
		r := cordon(t, nil, ws, c.args...)
		assert.Equal(t, exitUsage, r.code, "%q: %s", c.args, r.stderr)
		assert.Contains(t, r.stderr, c.want, "%q", c.args)
		assert.Empty(t, r.stdout, "%q", c.args)
	}
	assert.NoFileExists(t, marker, "nothing may run on a usage error")
}

// TestStatusJSONAlwaysOneDocument: with --json, status prints exactly one
// JSON document on stdout however it fails; without, the error goes to
// stderr.
func TestStatusJSONAlwaysOneDocument(t *testing.T) {
	e := newCfgEnv(t)
	e.write(t, e.userFile(), "mode = \"read-only\"\nfrobnicate = 1\n")
	where := e.userFile() + ":2: frobnicate: unknown key"
	cases := []struct {
		name  string
		args  []string
		code  int
		error string
	}{
		{"broken config", []string{"--json"}, exitFailure, where},
		{"broken config, flags after", []string{"--backend", "landlock", "--json"}, exitFailure, where},
		{"unknown flag before --json", []string{"--frobnicate", "--json"}, exitUsage, "unknown flag --frobnicate"},
		{"bad flag value", []string{"--json", "--mode", "everything"}, exitUsage, `--mode: unknown mode "everything"`},
		{"extra argument", []string{"--json", "bwrap"}, exitUsage, `unexpected argument "bwrap"`},
		{"one dash", []string{"-json"}, exitFailure, where},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.run(t, nil, "status", c.args...)
			assert.Equal(t, c.code, r.code, r.stderr)
			assert.Empty(t, r.stderr)
			dec := json.NewDecoder(strings.NewReader(r.stdout))
			var doc map[string]any
			require.NoError(t, dec.Decode(&doc), r.stdout)
			assert.False(t, dec.More(), "one document: %s", r.stdout)
			assert.Equal(t, "unavailable", doc["status"])
			assert.Contains(t, doc["error"], c.error)
			if c.code == exitFailure {
				assert.Len(t, doc["problems"], 1)
				assert.Contains(t, doc["problems"].([]any)[0], where)
			}
		})
	}
	r := e.run(t, nil, "status")
	assert.Equal(t, exitUsage, r.code)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "cordon status: "+where)
	r = e.run(t, nil, "status", "--json=false")
	assert.Equal(t, exitUsage, r.code)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "cordon status: "+where)
}

// TestCompletion: the scripts load in their shells, and what they ask
// cordon for (its hidden __complete command) offers the commands, the
// flags, their values and the sessions.
func TestCompletion(t *testing.T) {
	ws, state := workspace(t)
	id := newSession(t, state, ws)
	scripts := map[string]string{}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		r := cordon(t, nil, "", "completion", sh)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "__complete", sh)
		assert.Contains(t, r.stdout, "cordon", sh)
		scripts[sh] = r.stdout
	}

	t.Run("bash", func(t *testing.T) {
		out, err := exec.Command("bash", "-c", `source <("$0" completion bash) && complete -p cordon`, cordonBin).CombinedOutput()
		require.NoError(t, err, string(out))
		assert.Equal(t, "complete -o default -F __start_cordon cordon\n", string(out))
		// What bash offers after "cordon st<TAB>" and "cordon exec --mode
		// <TAB>": the script needs the bash-completion package, as every
		// cobra script does.
		const bashCompletion = "/usr/share/bash-completion/bash_completion"
		if _, err := os.Stat(bashCompletion); err != nil {
			testenv.SkipUnlessCI(t, "no bash-completion package")
		}
		complete := func(words ...string) string {
			script := `source ` + bashCompletion + ` && source <("$0" completion bash) || exit 1
compopt() { :; } # only a real completion may call it
COMP_WORDS=("$0" "$@"); COMP_CWORD=$#; COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
__start_cordon cordon "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"`
			out, err := exec.Command("bash", append([]string{"-c", script, cordonBin}, words...)...).CombinedOutput()
			require.NoError(t, err, string(out))
			return string(out)
		}
		assert.Equal(t, "status\n", complete("st"))
		assert.Equal(t, strings.Join(modeNames, "\n")+"\n", complete("exec", "--mode", ""))
		assert.Contains(t, complete("log", "--state-dir", state, ""), id)
	})
	t.Run("zsh", func(t *testing.T) {
		if _, err := exec.LookPath("zsh"); err != nil {
			testenv.SkipUnlessCI(t, "no zsh")
		}
		file := filepath.Join(t.TempDir(), "_cordon")
		require.NoError(t, os.WriteFile(file, []byte(scripts["zsh"]), 0o644))
		out, err := exec.Command("zsh", "-n", file).CombinedOutput()
		assert.NoError(t, err, "zsh -n: %s", out)
		assert.True(t, strings.HasPrefix(scripts["zsh"], "#compdef cordon\n"))
	})
	t.Run("fish", func(t *testing.T) {
		if _, err := exec.LookPath("fish"); err != nil {
			testenv.SkipUnlessCI(t, "no fish")
		}
		dir := t.TempDir()
		file := filepath.Join(dir, "cordon.fish")
		require.NoError(t, os.WriteFile(file, []byte(scripts["fish"]), 0o644))
		out, err := exec.Command("fish", "--no-execute", file).CombinedOutput()
		require.NoError(t, err, "fish --no-execute: %s", out)
		// fish runs the script and asks it, with cordon on PATH.
		require.NoError(t, os.Symlink(cordonBin, filepath.Join(dir, "cordon")))
		cmd := exec.Command("fish", "--no-config", "-c", "source $argv[1]; complete -C 'cordon sta'", file)
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_DATA_HOME="+dir)
		out, err = cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		assert.Contains(t, string(out), "status\t")
	})

	// __complete is what every script runs; one line a candidate, then
	// :DIRECTIVE.
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{""}, commands},
		{[]string{"exec", "--mo"}, []string{"--mode"}},
		{[]string{"serve", "--network", ""}, []string{"allow", "deny"}},
		{[]string{"status", "--backend", ""}, backendNames},
		{[]string{"serve", "--preset", ""}, presetNames},
		{[]string{"serve", "--approval", ""}, approvalNames},
		{[]string{"serve", "--log-level", ""}, logLevels},
		{[]string{"mode", "--session", id, ""}, modeNames},
		{[]string{"mode", "--state-dir", state, "--session", ""}, []string{id}},
		{[]string{"log", "--state-dir", state, ""}, []string{id}},
		{[]string{"completion", ""}, shells},
		{[]string{"help", ""}, []string{"exec", "status"}},
	}
	for _, c := range cases {
		r := cordon(t, nil, "", append([]string{"__complete"}, c.args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		var got []string
		for _, line := range strings.Split(r.stdout, "\n") {
			if name, _, _ := strings.Cut(line, "\t"); name != "" && !strings.HasPrefix(name, ":") {
				got = append(got, name)
			}
		}
		for _, w := range c.want {
			assert.Contains(t, got, w, "%q", c.args)
		}
	}
}
