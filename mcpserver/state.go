package mcpserver

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// requestState is what cordon puts in a multi round-trip requestState. The
// client echoes it back, so it is signed with a per-process key and bound
// to everything the answer applies to; each state is accepted once.
type requestState struct {
	Session string `json:"s"`
	Tool    string `json:"t"`
	Args    string `json:"a"` // hex sha256 of the canonical arguments
	Target  string `json:"m"`
	// Current is the session's mode the question was asked under: a
	// retry that reads another (the human changed it while the question
	// was open) is not the call the human answered.
	Current string `json:"c,omitempty"`
	Expires int64  `json:"e"` // unix seconds
	Nonce   string `json:"n"`
	// Pins are the fingerprints of what the question showed (tools.Effect),
	// checked again before the approved call starts.
	Pins string `json:"p,omitempty"`
}

// stateSigner signs and checks request states.
type stateSigner struct {
	key []byte

	mu   sync.Mutex
	used map[string]time.Time // nonce → expiry, for single use
	now  func() time.Time
}

func newStateSigner() *stateSigner {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return &stateSigner{key: key, used: map[string]time.Time{}, now: time.Now}
}

var (
	errStateInvalid = errors.New("the approval state is not one cordon issued, or was altered")
	errStateExpired = errors.New("the approval state has expired")
	errStateReused  = errors.New("the approval state was already used")
	errStateBinding = errors.New("the approval state belongs to another call")
	errStateMode    = errors.New("the session's mode changed while the question was open: the answer was to a question about another mode")
)

func (s *stateSigner) sign(st requestState) string {
	payload, _ := json.Marshal(st)
	mac := hmac.New(sha256.New, s.key)
	mac.Write(payload)
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// issue makes a fresh state for one question.
func (s *stateSigner) issue(session, tool, argsDigest, target, current, pins string, ttl time.Duration) string {
	nonce := make([]byte, 16)
	rand.Read(nonce)
	return s.sign(requestState{Session: session, Tool: tool, Args: argsDigest, Target: target, Current: current,
		Expires: s.now().Add(ttl).Unix(), Nonce: hex.EncodeToString(nonce), Pins: pins})
}

// redeem checks a state echoed by the client against the call it comes
// with, and consumes it.
func (s *stateSigner) redeem(raw, session, tool, argsDigest string) (requestState, error) {
	var st requestState
	payloadB64, macB64, ok := strings.Cut(raw, ".")
	if !ok {
		return st, errStateInvalid
	}
	payload, err1 := base64.RawURLEncoding.Strict().DecodeString(payloadB64)
	got, err2 := base64.RawURLEncoding.Strict().DecodeString(macB64)
	if err1 != nil || err2 != nil {
		return st, errStateInvalid
	}
	mac := hmac.New(sha256.New, s.key)
	mac.Write(payload)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return st, errStateInvalid
	}
	if err := json.Unmarshal(payload, &st); err != nil {
		return st, errStateInvalid
	}
	now := s.now()
	if now.Unix() > st.Expires {
		return st, errStateExpired
	}
	if st.Session != session || st.Tool != tool || st.Args != argsDigest {
		return st, errStateBinding
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, exp := range s.used {
		if now.After(exp.Add(time.Minute)) {
			delete(s.used, n)
		}
	}
	if _, seen := s.used[st.Nonce]; seen {
		return st, errStateReused
	}
	s.used[st.Nonce] = time.Unix(st.Expires, 0)
	return st, nil
}

// argsDigest is a digest of a call's arguments without the multi
// round-trip fields; json.Marshal sorts map keys, so it is canonical.
func argsDigest(args map[string]any) string {
	b, err := json.Marshal(args)
	if err != nil {
		b = []byte(fmt.Sprint(args))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
