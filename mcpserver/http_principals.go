package mcpserver

import (
	"context"
	"crypto/subtle"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/cordonhq/cordon/internal/principal"
	"github.com/cordonhq/cordon/sessionlog"
	"github.com/cordonhq/cordon/tools"
	"github.com/mark3labs/mcp-go/server"
)

// Principals over HTTP. The server's own token is the principal ""; each
// line of the token file is one more. A principal has its own sessions:
// a 2025 protocol session belongs to the principal that opened it, and no
// other may use, stream or delete it; a 2026-07-28 client, which has no
// protocol session, gets its principal's token session. Process ids and
// logs are per session, so one principal never sees another's.

type principalKey struct{}

// principalOf is the principal a request authenticated as.
func principalOf(ctx context.Context) string {
	name, _ := ctx.Value(principalKey{}).(string)
	return name
}

// principalFile is the token file, re-read when it changes: a token added
// or revoked is honoured by the running server.
type principalFile struct {
	path string

	mu    sync.Mutex
	list  []principal.Principal
	stamp fileStamp
}

type fileStamp struct {
	ok   bool
	mod  time.Time
	size int64
}

func stampOf(path string) fileStamp {
	st, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{ok: true, mod: st.ModTime(), size: st.Size()}
}

// refresh re-reads the file if it changed, and returns the names that are
// gone. A file that cannot be read honours no principal (fail closed).
func (f *principalFile) refresh(s *Server) (gone []string) {
	if f == nil || f.path == "" {
		return nil
	}
	st := stampOf(f.path)
	f.mu.Lock()
	defer f.mu.Unlock()
	if st == f.stamp {
		return nil
	}
	f.stamp = st
	list, err := principal.Load(f.path)
	if err != nil {
		s.log.Error().Err(err).Msg("the HTTP token file cannot be used: no principal's token is honoured until it is fixed")
		list = nil
	}
	kept := map[string]bool{}
	for _, p := range list {
		kept[p.Name] = true
	}
	for _, p := range f.list {
		if !kept[p.Name] {
			gone = append(gone, p.Name)
		}
	}
	f.list = list
	s.log.Info().Int("principals", len(list)).Str("file", f.path).Msg("read the HTTP token file")
	return gone
}

// match finds the principal whose token this is.
func (f *principalFile) match(token string) (principal.Principal, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.list {
		if p.Matches(token) {
			return p, true
		}
	}
	return principal.Principal{}, false
}

func (f *principalFile) workspace(name string) string {
	if f == nil || name == "" {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.list {
		if p.Name == name {
			return p.Workspace
		}
	}
	return ""
}

// authenticate checks the bearer token of every request against the
// server's own token and the principals', notes which principal sent it,
// and bounds the request's body.
func (s *Server) authenticate(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		name, ok := "", subtle.ConstantTimeCompare([]byte(got), want) == 1
		if !ok {
			if bearer, found := cutBearer(got); found && s.principals != nil {
				s.endRevoked(s.principals.refresh(s))
				var p principal.Principal
				if p, ok = s.principals.match(bearer); ok {
					name = p.Name
				}
			}
		}
		if !ok {
			// MCP clients answer a 401 by trying OAuth, which cordon does
			// not offer; whoever reads the challenge or the body learns
			// that a token is missing and where it is, not that OAuth failed.
			w.Header().Set("WWW-Authenticate", `Bearer realm="cordon", error="invalid_token", error_description="`+needToken+`"`)
			http.Error(w, "unauthorized: "+needToken, http.StatusUnauthorized)
			return
		}
		s.touch(name)
		r.Body = http.MaxBytesReader(w, r.Body, maxRequestBody)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, name)))
	})
}

func cutBearer(h string) (string, bool) {
	const prefix = "Bearer "
	if len(h) <= len(prefix) || h[:len(prefix)] != prefix {
		return "", false
	}
	return h[len(prefix):], true
}

// guardOwnership lets a request name a protocol session only if its
// principal opened it: to any other principal the session does not exist
// (404, as for an unknown id). The session a new initialize opens is
// claimed for its principal before the response leaves.
func (s *Server) guardOwnership(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := principalOf(r.Context())
		if id := r.Header.Get(server.HeaderKeySessionID); id != "" {
			s.mu.Lock()
			owner, known := s.owners[id]
			s.mu.Unlock()
			if known && owner != name {
				http.Error(w, "session not found: "+server.HeaderKeySessionID+" names no session of this token; initialize to open one", http.StatusNotFound)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&claimingWriter{ResponseWriter: w, claim: func(id string) {
			s.mu.Lock()
			if _, taken := s.owners[id]; !taken {
				s.owners[id] = name
			}
			s.mu.Unlock()
		}}, r)
	})
}

// claimingWriter claims the session id a response carries, as its header
// is written.
type claimingWriter struct {
	http.ResponseWriter
	claim   func(id string)
	claimed bool
}

func (c *claimingWriter) WriteHeader(code int) {
	if !c.claimed {
		c.claimed = true
		if id := c.Header().Get(server.HeaderKeySessionID); id != "" {
			c.claim(id)
		}
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *claimingWriter) Write(b []byte) (int, error) {
	if !c.claimed {
		c.WriteHeader(http.StatusOK)
	}
	return c.ResponseWriter.Write(b)
}

func (c *claimingWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *claimingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// tokenSession is a principal's session for 2026-07-28 clients.
type tokenSession struct {
	sess *tools.Session
	busy int // calls running
}

// touch notes that a principal sent a request: its token session is not idle.
func (s *Server) touch(name string) {
	s.mu.Lock()
	s.lastSeen[name] = time.Now()
	s.mu.Unlock()
}

// tokenSessionFor is the principal's token session, started at its first call.
func (s *Server) tokenSessionFor(name string) (*tools.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errShuttingDown
	}
	if ts := s.tokens[name]; ts != nil {
		return ts.sess, nil
	}
	sess, err := s.newSession(sessionlog.NewSessionID(), "http", true, name, s.principals.workspace(name))
	if err != nil {
		return nil, err
	}
	s.tokens[name] = &tokenSession{sess: sess}
	s.lastSeen[name] = time.Now()
	return sess, nil
}

// hold keeps a token session from ending as idle while a call runs in it.
func (s *Server) hold(sess *tools.Session) (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, ts := range s.tokens {
		if ts.sess == sess {
			ts.busy++
			return func() {
				s.mu.Lock()
				ts.busy--
				s.lastSeen[name] = time.Now()
				s.mu.Unlock()
			}
		}
	}
	return func() {}
}

// endIdle ends the token sessions that saw no request for idle.
func (s *Server) endIdle(idle time.Duration) {
	now := time.Now()
	var ended []*tools.Session
	s.mu.Lock()
	for name, ts := range s.tokens {
		if ts.busy == 0 && now.Sub(s.lastSeen[name]) >= idle {
			ended = append(ended, ts.sess)
			delete(s.tokens, name)
			s.log.Info().Str("session", ts.sess.ID).Str("principal", name).Dur("idle", idle).Msg("ended an idle token session")
		}
	}
	s.mu.Unlock()
	for _, sess := range ended {
		s.closeSession(sess)
	}
}

// endRevoked ends at once every session of the principals whose tokens
// were revoked.
func (s *Server) endRevoked(names []string) {
	if len(names) == 0 {
		return
	}
	gone := map[string]bool{}
	for _, n := range names {
		gone[n] = true
	}
	var ended []*tools.Session
	var protocolIDs []string
	s.mu.Lock()
	for name, ts := range s.tokens {
		if gone[name] {
			ended = append(ended, ts.sess)
			delete(s.tokens, name)
		}
	}
	for id, owner := range s.owners {
		if gone[owner] {
			protocolIDs = append(protocolIDs, id)
		}
	}
	s.mu.Unlock()
	for _, sess := range ended {
		s.closeSession(sess)
	}
	for _, id := range protocolIDs {
		s.endSession(id)
	}
	for n := range gone {
		s.log.Info().Str("principal", n).Msg("a principal's token was revoked: its sessions ended")
	}
}

// watchPrincipals re-reads the token file when it changes and ends idle
// token sessions, until ctx ends.
func (s *Server) watchPrincipals(ctx context.Context, idle time.Duration) {
	every := time.Second
	if idle > 0 && idle/4 < every {
		every = idle / 4
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.endRevoked(s.principals.refresh(s))
			if idle > 0 {
				s.endIdle(idle)
			}
		}
	}
}
