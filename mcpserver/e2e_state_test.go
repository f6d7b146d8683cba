//go:build linux

package mcpserver_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests play a 2026-07-28 client that answers cordon's input_required
// results itself (multi round-trip disabled in the SDK), so that they can
// send forged, altered, rebound, expired and replayed requestStates. SPEC §5:
// the state is signed over session, tool, argument digest, target mode,
// expiry and nonce, and accepted once; anything else is refused and nothing
// runs.

const stateVersion = "2026-07-28"

// stateClient is one cordon server process (read-only) driven with raw
// multi round-trip retries.
type stateClient struct {
	w        *world
	cs       *mcp.ClientSession
	elicited *atomic.Int32
}

// stateServe starts `cordon serve --mode read-only` and connects a
// 2026-07-28 client whose multi round-trip middleware is off. The client
// declares elicitation (so cordon asks rather than failing closed), but its
// handler must never be called: every answer is sent by the test itself.
func stateServe(t *testing.T, w *world, extra ...string) *stateClient {
	t.Helper()
	var n atomic.Int32
	handler := func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		n.Add(1)
		t.Errorf("the elicitation handler was called (message %q): with multi round-trip disabled the test answers itself", req.Params.Message)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	cs := w.stdio(t, clientOpts{version: stateVersion, elicit: handler, noMRTR: true}, append([]string{"--mode", "read-only"}, extra...)...)
	sc := &stateClient{w: w, cs: cs, elicited: &n}
	t.Cleanup(func() {
		assert.Zero(t, n.Load(), "the client's elicitation handler must never run")
	})
	return sc
}

// rawCall sends one tools/call with whatever multi round-trip fields the
// test chooses.
func (sc *stateClient) rawCall(t *testing.T, tool string, args map[string]any, state string, responses mcp.InputResponseMap) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := sc.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, RequestState: state, InputResponses: responses})
	require.NoError(t, err)
	return res
}

// ask makes the first, escalating call and returns cordon's requestState.
func (sc *stateClient) ask(t *testing.T, args map[string]any) string {
	t.Helper()
	res := sc.rawCall(t, "bash", args, "", nil)
	require.True(t, res.NeedsInput(), "the escalating call must come back input_required; got isError=%v %q", res.IsError, text(res))
	require.NotEmpty(t, res.RequestState, "input_required without a requestState")
	return res.RequestState
}

// alive checks the server still answers a plain call after a refusal.
func (sc *stateClient) alive(t *testing.T) {
	t.Helper()
	res := sc.rawCall(t, "sandbox_status", nil, "", nil)
	require.False(t, res.IsError, "sandbox_status after a refusal: %s", text(res))
	require.False(t, res.NeedsInput())
	assert.Equal(t, "read-only", structured(t, res)["mode"], "the session's mode is unchanged")
}

// refused asserts a retry was refused before anything ran: an isError
// result with ESCALATION_DENIED, the "approval refused … nothing ran" text
// naming why (want), none of the files written, and a server that still
// answers.
func (sc *stateClient) refused(t *testing.T, what string, res *mcp.CallToolResult, want string, files ...string) {
	t.Helper()
	require.False(t, res.NeedsInput(), "%s: a refused answer must not ask again (no retry loop)", what)
	assert.True(t, res.IsError, "%s: must be an error result, got %q", what, text(res))
	assert.Equal(t, "ESCALATION_DENIED", errorCode(t, res), "%s: %s", what, text(res))
	assert.True(t, strings.HasPrefix(text(res), "[sandbox: approval refused]"), "%s: %q", what, text(res))
	assert.Contains(t, text(res), "nothing ran", what)
	if want != "" {
		assert.Contains(t, text(res), want, what)
	}
	for _, f := range files {
		assert.NoFileExists(t, f, "%s: the command must not have run", what)
	}
	sc.alive(t)
}

func decisionAnswer(decision string) mcp.InputResponseMap {
	return mcp.InputResponseMap{"decision": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": decision}}}
}

// stateArgsDigest is cordon's argument digest: sha256 of the JSON of the
// arguments (keys sorted by encoding/json).
func stateArgsDigest(t *testing.T, args map[string]any) string {
	t.Helper()
	b, err := json.Marshal(args)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// flipAt returns s with the character at i replaced by another base64url
// character. i must be inside a segment and not its last character, so
// that the decoded bytes really change (the last character of unpadded
// base64 may carry padding bits only).
func flipAt(s string, i int) string {
	c := byte('A')
	if s[i] == 'A' {
		c = 'B'
	}
	return s[:i] + string(c) + s[i+1:]
}

// Test 1: the first escalating call asks, through an input_required result
// carrying a signed state and one "decision" question, and runs nothing.
func TestRequestStateFirstCallAsks(t *testing.T) {
	w := newWorld(t)
	sc := stateServe(t, w)
	f := filepath.Join(w.ws, "asked.txt")
	res := sc.rawCall(t, "bash", escalate(writeCmd(f), "workspace-write"), "", nil)
	require.True(t, res.NeedsInput(), "got isError=%v %q", res.IsError, text(res))
	assert.False(t, res.IsError)
	assert.Empty(t, text(res), "an input_required result has no content")
	assert.NotEmpty(t, res.RequestState)
	payload, mac, ok := strings.Cut(res.RequestState, ".")
	assert.True(t, ok && payload != "" && mac != "", "state %q is payload.mac", res.RequestState)

	require.Len(t, res.InputRequests, 1, "one question")
	req, ok := res.InputRequests["decision"]
	require.True(t, ok, "the question is named decision: %v", res.InputRequests)
	ep, ok := req.(*mcp.ElicitParams)
	require.True(t, ok, "the question is an elicitation, got %T", req)
	assert.Contains(t, ep.Message, "bash")
	assert.Contains(t, ep.Message, "workspace-write")
	assert.Contains(t, ep.Message, f)
	assert.Contains(t, ep.Message, "the build needs to write its output")
	schema, ok := ep.RequestedSchema.(map[string]any)
	require.True(t, ok, "requestedSchema is %T", ep.RequestedSchema)
	props, _ := schema["properties"].(map[string]any)
	decision, _ := props["decision"].(map[string]any)
	require.NotNil(t, decision, "schema %v has a decision property", schema)
	var enum []string
	if raw, ok := decision["enum"].([]any); ok {
		for _, v := range raw {
			s, _ := v.(string)
			enum = append(enum, s)
		}
	}
	for _, want := range []string{"allow_once", "allow_session", "deny"} {
		assert.Contains(t, enum, want, "decision enum %v", enum)
	}
	assert.Contains(t, schema["required"], "decision")

	assert.NoFileExists(t, f, "nothing runs before the answer")
	sc.alive(t)
	// Asking does not consume or widen anything: a plain write is denied.
	res = sc.rawCall(t, "bash", map[string]any{"command": writeCmd(f)}, "", nil)
	assert.True(t, res.IsError)
	assert.True(t, strings.HasPrefix(text(res), "[sandbox: file access denied under read-only mode]"), text(res))
	assert.NoFileExists(t, f)
}

// Test 2: states cordon never issued are refused.
func TestRequestStateForged(t *testing.T) {
	w := newWorld(t)
	sc := stateServe(t, w)
	f := filepath.Join(w.ws, "forged.txt")
	args := escalate(writeCmd(f), "workspace-write")
	sessions := listSessions(t, w)
	require.Len(t, sessions, 1)

	// A payload that is exactly what cordon would sign for this call (right
	// session, tool, argument digest, target, a live expiry), with a random
	// MAC.
	payload, err := json.Marshal(map[string]any{"s": sessions[0], "t": "bash", "a": stateArgsDigest(t, args),
		"m": "workspace-write", "e": time.Now().Add(time.Hour).Unix(), "n": "00112233445566778899aabbccddeeff"})
	require.NoError(t, err)
	mac := make([]byte, 32)
	_, err = rand.Read(mac)
	require.NoError(t, err)
	wellFormed := base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(mac)

	for _, c := range []struct{ name, state string }{
		{"FORGED", "FORGED"},
		{"well-formed, random MAC", wellFormed},
		{"payload only", base64.RawURLEncoding.EncodeToString(payload)},
		{"payload, empty MAC", base64.RawURLEncoding.EncodeToString(payload) + "."},
		{"not base64", "!!!.???"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, d := range []string{"allow_once", "allow_session"} {
				res := sc.rawCall(t, "bash", args, c.state, decisionAnswer(d))
				sc.refused(t, c.name+"/"+d, res, "approval refused", f)
			}
		})
	}
	// Nothing was widened by any of it.
	res := sc.rawCall(t, "bash", map[string]any{"command": writeCmd(f)}, "", nil)
	assert.True(t, res.IsError, text(res))
	assert.NoFileExists(t, f)
}

// Test 3: one changed character, in the payload or in the MAC, is refused.
func TestRequestStateAltered(t *testing.T) {
	w := newWorld(t)
	sc := stateServe(t, w)
	f := filepath.Join(w.ws, "altered.txt")
	args := escalate(writeCmd(f), "workspace-write")
	state := sc.ask(t, args)
	payload, mac, ok := strings.Cut(state, ".")
	require.True(t, ok, "state %q", state)
	require.Greater(t, len(payload), 4)
	require.Greater(t, len(mac), 4)

	altered := map[string]string{
		"payload first char":  flipAt(payload, 0) + "." + mac,
		"payload middle char": flipAt(payload, len(payload)/2) + "." + mac,
		"MAC first char":      payload + "." + flipAt(mac, 0),
		"MAC middle char":     payload + "." + flipAt(mac, len(mac)/2),
		"MAC truncated":       payload + "." + mac[:len(mac)-4],
		"MAC dropped":         payload,
		"extra segment":       state + ".x",
	}
	for name, st := range altered {
		require.NotEqual(t, state, st, name)
		res := sc.rawCall(t, "bash", args, st, decisionAnswer("allow_once"))
		sc.refused(t, name, res, "not one cordon issued, or was altered", f)
	}

	// A payload re-signed by nobody: decode, change the target to danger,
	// re-encode, keep the old MAC.
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(raw, &fields))
	fields["m"] = "danger-full-access"
	raw, err = json.Marshal(fields)
	require.NoError(t, err)
	res := sc.rawCall(t, "bash", args, base64.RawURLEncoding.EncodeToString(raw)+"."+mac, decisionAnswer("allow_once"))
	sc.refused(t, "target rewritten to danger-full-access", res, "not one cordon issued, or was altered", f)
}

// Test 4: the state is bound to the call's arguments and tool.
func TestRequestStateBoundToCall(t *testing.T) {
	w := newWorld(t)
	sc := stateServe(t, w)
	f := filepath.Join(w.ws, "bound.txt")
	g := filepath.Join(w.ws, "other.txt")
	args := escalate(writeCmd(f), "workspace-write")
	state := sc.ask(t, args)

	danger := escalate(writeCmd(f), "danger-full-access")
	otherJustification := escalate(writeCmd(f), "workspace-write")
	otherJustification["justification"] = "a different reason"
	extraArg := escalate(writeCmd(f), "workspace-write")
	extraArg["timeout_ms"] = 5000
	for _, c := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"another command, same path", "bash", escalate("echo pwned > "+f, "workspace-write")},
		{"another target path", "bash", escalate(writeCmd(g), "workspace-write")},
		{"a wider target mode", "bash", danger},
		{"another justification", "bash", otherJustification},
		{"an added argument", "bash", extraArg},
		{"no escalation arguments", "bash", map[string]any{"command": writeCmd(f)}},
		{"write_file, same arguments", "write_file", args},
		{"write_file, its own arguments", "write_file", map[string]any{"path": f, "content": "pwned\n",
			"sandbox_permissions": "workspace-write", "justification": "the build needs to write its output"}},
	} {
		res := sc.rawCall(t, c.tool, c.args, state, decisionAnswer("allow_once"))
		sc.refused(t, c.name, res, "belongs to another call", f, g)
	}
}

// Test 5: a state is accepted once.
func TestRequestStateReplayed(t *testing.T) {
	w := newWorld(t)
	sc := stateServe(t, w)
	f := filepath.Join(w.ws, "replay.txt")
	args := escalate(writeCmd(f), "workspace-write")
	state := sc.ask(t, args)

	res := sc.rawCall(t, "bash", args, state, decisionAnswer("allow_once"))
	require.False(t, res.NeedsInput())
	require.False(t, res.IsError, "the genuine answer runs the call: %s", text(res))
	assert.Equal(t, "written\n", fileContent(t, f))
	require.NoError(t, os.Remove(f))

	for _, d := range []string{"allow_once", "allow_session"} {
		res = sc.rawCall(t, "bash", args, state, decisionAnswer(d))
		sc.refused(t, "replay/"+d, res, "already used", f)
	}
	// allow_once granted nothing beyond the one call.
	res = sc.rawCall(t, "bash", map[string]any{"command": writeCmd(f)}, "", nil)
	assert.True(t, res.IsError, text(res))
	assert.NoFileExists(t, f)

	// A fresh question gets a fresh state, which works once too.
	state2 := sc.ask(t, args)
	assert.NotEqual(t, state, state2, "every question has its own nonce")
	res = sc.rawCall(t, "bash", args, state2, decisionAnswer("allow_once"))
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "written\n", fileContent(t, f))
}

// Test 6: a state expires with the approval timeout.
func TestRequestStateExpired(t *testing.T) {
	w := newWorld(t)
	sc := stateServe(t, w, "--approval-timeout", "1s")
	f := filepath.Join(w.ws, "expired.txt")
	args := escalate(writeCmd(f), "workspace-write")
	state := sc.ask(t, args)
	time.Sleep(2100 * time.Millisecond)
	res := sc.rawCall(t, "bash", args, state, decisionAnswer("allow_once"))
	sc.refused(t, "expired", res, "expired", f)
}

// Test 7: a state from one session (server process A) is refused by
// another (process B), even over the same state dir; A still honours it.
func TestRequestStateOtherSession(t *testing.T) {
	w := newWorld(t)
	a := stateServe(t, w)
	b := stateServe(t, w)
	f := filepath.Join(w.ws, "cross.txt")
	args := escalate(writeCmd(f), "workspace-write")
	state := a.ask(t, args)

	res := b.rawCall(t, "bash", args, state, decisionAnswer("allow_once"))
	b.refused(t, "A's state in B", res, "approval refused", f)
	res = b.rawCall(t, "bash", args, state, decisionAnswer("allow_session"))
	b.refused(t, "A's state in B, allow_session", res, "approval refused", f)

	// B's own session was not widened.
	g := filepath.Join(w.ws, "b-plain.txt")
	res = b.rawCall(t, "bash", map[string]any{"command": writeCmd(g)}, "", nil)
	assert.True(t, res.IsError, text(res))
	assert.NoFileExists(t, g)

	// Control: the state was genuine, and B's refusal did not spend it.
	res = a.rawCall(t, "bash", args, state, decisionAnswer("allow_once"))
	assert.False(t, res.IsError, text(res))
	assert.Equal(t, "written\n", fileContent(t, f))
}

// Test 8: answers without any state are refused, on the very first call,
// and change nothing.
func TestRequestStateMissing(t *testing.T) {
	w := newWorld(t)
	sc := stateServe(t, w)
	f := filepath.Join(w.ws, "nostate.txt")
	args := escalate(writeCmd(f), "workspace-write")

	res := sc.rawCall(t, "bash", args, "", decisionAnswer("allow_session"))
	sc.refused(t, "escalation answered without a state", res, "approval refused", f)
	res = sc.rawCall(t, "bash", args, "", decisionAnswer("allow_once"))
	sc.refused(t, "escalation answered without a state, allow_once", res, "approval refused", f)
	res = sc.rawCall(t, "bash", map[string]any{"command": writeCmd(f)}, "", decisionAnswer("allow_session"))
	sc.refused(t, "plain write answered without a state", res, "approval refused", f)

	// The mode did not change: a following plain write is still denied.
	res = sc.rawCall(t, "bash", map[string]any{"command": writeCmd(f)}, "", nil)
	assert.True(t, res.IsError, text(res))
	assert.True(t, strings.HasPrefix(text(res), "[sandbox: file access denied under read-only mode]"), text(res))
	assert.NoFileExists(t, f)
	id := listSessions(t, w)[0]
	assert.NotContains(t, cordonCLI(t, w, "log", "--json", id), `"source":"escalation"`, "no escalation was recorded")
}

// Test 9: a genuine state with a refusal (deny, decline, cancel) is an
// ordinary denial: no retry loop, nothing written.
func TestRequestStateDenied(t *testing.T) {
	w := newWorld(t)
	sc := stateServe(t, w)
	f := filepath.Join(w.ws, "denied.txt")
	args := escalate(writeCmd(f), "workspace-write")
	for _, c := range []struct {
		name      string
		responses mcp.InputResponseMap
	}{
		{"accept/deny", decisionAnswer("deny")},
		{"decline", mcp.InputResponseMap{"decision": &mcp.ElicitResult{Action: "decline"}}},
		{"cancel", mcp.InputResponseMap{"decision": &mcp.ElicitResult{Action: "cancel"}}},
		{"accept/unknown decision", decisionAnswer("allow_forever")},
	} {
		state := sc.ask(t, args)
		res := sc.rawCall(t, "bash", args, state, c.responses)
		require.False(t, res.NeedsInput(), "%s: a refusal is final, not a new question", c.name)
		assert.True(t, res.IsError, "%s: %s", c.name, text(res))
		assert.Equal(t, "ESCALATION_DENIED", errorCode(t, res), "%s: %s", c.name, text(res))
		assert.True(t, strings.HasPrefix(text(res), "[sandbox: file access denied under read-only mode]"), "%s: %q", c.name, text(res))
		assert.Contains(t, text(res), "[sandbox: escalation to workspace-write was not approved]", c.name)
		assert.NoFileExists(t, f, c.name)
		sc.alive(t)
	}
	id := listSessions(t, w)[0]
	assert.Contains(t, cordonCLI(t, w, "log", "--json", id), `"type":"approval/outcome","data":{"decision":"deny"`)
	res := sc.rawCall(t, "bash", map[string]any{"command": writeCmd(f)}, "", nil)
	assert.True(t, res.IsError, text(res))
	assert.NoFileExists(t, f)
}
