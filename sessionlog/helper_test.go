package sessionlog

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The multi-process tests re-exec the test binary (the go-landlock lltest
// way): with helperEnv set, TestMain runs one helper instead of the tests.
const helperEnv = "SESSIONLOG_TEST_HELPER"

func TestMain(m *testing.M) {
	if h := os.Getenv(helperEnv); h != "" {
		if err := runHelper(h); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runHelper runs in a child process. "append" appends $SL_N tool/call events
// to a session with AppendTo, the way `cordon mode` does. "serve" resumes a
// session with Open, says "ready" and appends large events until killed;
// "rawserve" too, with larger events written more directly.
func runHelper(name string) error {
	dir, id := os.Getenv("SL_DIR"), os.Getenv("SL_ID")
	switch name {
	case "append":
		n, err := strconv.Atoi(os.Getenv("SL_N"))
		if err != nil {
			return err
		}
		for i := range n {
			if _, err := AppendTo(dir, id, EventToolCall, map[string]any{"writer": os.Getenv("SL_WRITER"), "i": i}); err != nil {
				return err
			}
		}
		return nil
	case "serve":
		l, err := Open(dir, id)
		if err != nil {
			return err
		}
		big := strings.Repeat("x", 64<<10)
		for i := 0; ; i++ {
			if _, err := l.Append(EventToolResult, map[string]any{"i": i, "output": big}); err != nil {
				return err
			}
			if i == 0 {
				fmt.Println("ready")
			}
		}
	case "rawserve":
		// Like "serve", with the encoding done once: nearly all of each
		// append is the write of a 512 KiB line, where a kill tears it.
		l, err := Open(dir, id)
		if err != nil {
			return err
		}
		raw, err := encodeData(EventToolResult, map[string]string{"output": strings.Repeat("y", 512<<10)})
		if err != nil {
			return err
		}
		for i := 0; ; i++ {
			_, _, c, err := writeEvent(l.f, l.c, EventToolResult, raw, false)
			if err != nil {
				return err
			}
			l.c = c
			if i == 0 {
				fmt.Println("ready")
			}
		}
	}
	return fmt.Errorf("unknown helper %q", name)
}

// helper returns a command that runs helper name on session id in dir.
func helper(t *testing.T, name, dir, id string, env ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+name, "SL_DIR="+dir, "SL_ID="+id)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// newSession creates a session with a few events of every kind and returns
// its dir and the open Log.
func newSession(t *testing.T, id string) (string, *Log) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sessions")
	l, err := Create(dir, id, StartInfo{Workspace: "/work/project", Mode: "workspace-write", Transport: "stdio"})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return dir, l
}

// sampleLog returns the bytes of a closed log of six events, the last a
// tool/result with free-form data.
func sampleLog(t *testing.T) []byte {
	t.Helper()
	dir, l := newSession(t, "sample")
	for _, a := range []struct {
		typ  string
		data any
	}{
		{EventToolCall, map[string]any{"tool": "bash", "command": "ls -l"}},
		{EventApprovalRequest, map[string]any{"tool": "bash", "target": "danger-full-access"}},
		{EventApprovalOutcome, map[string]any{"decision": "allow_session"}},
		{EventSandboxMode, ModeData{Mode: "danger-full-access", Source: SourceEscalation}},
		{EventToolResult, map[string]any{"output": "total 0"}},
	} {
		_, err := l.Append(a.typ, a.data)
		require.NoError(t, err)
	}
	require.NoError(t, l.Close())
	b, err := os.ReadFile(filepath.Join(dir, "sample.jsonl"))
	require.NoError(t, err)
	return b
}

// lines splits a log into its lines, without newlines.
func lines(b []byte) [][]byte {
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}
