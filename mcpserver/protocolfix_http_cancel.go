package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Cancellation over HTTP. A 2025 client cancels a request it sent by
// posting notifications/cancelled with the request's id, and then expects
// no response for it (the receiver SHOULD NOT send one). mcp-go v1.2.1
// ends the handler's context, and then writes the response the handler
// returned anyway: for cordon's tools, the killed command's result. What
// mcp-go does not write is a response whose HTTP request has ended, so
// cordon gives each request its own cancellable HTTP context, and the
// cancellation ends that one: the command is killed the same way, and
// nothing is written for it.

// inflight are the 2025 requests being answered, by session and id.
type inflight struct {
	mu sync.Mutex
	m  map[string]*inflightRequest
}

type inflightRequest struct {
	cancel    context.CancelFunc
	cancelled atomic.Bool
}

func inflightKey(session string, id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return session + "\x00" + string(id)
	}
	return session + "\x00" + b.String()
}

func (f *inflight) add(key string, req *inflightRequest) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]*inflightRequest{}
	}
	f.m[key] = req
}

func (f *inflight) remove(key string, req *inflightRequest) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m[key] == req {
		delete(f.m, key)
	}
}

func (f *inflight) get(key string) *inflightRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[key]
}

// track serves each 2025 request under a context that a
// notifications/cancelled of the same session for its id ends. The
// notification itself goes on to mcp-go, which answers it 202 (and ends
// the handler's context too).
func (f *inflight) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := messageOf(r)
		session := r.Header.Get(server.HeaderKeySessionID)
		if m == nil || m.Modern || session == "" {
			next.ServeHTTP(w, r)
			return
		}
		if m.Method == string(mcp.MethodNotificationCancelled) {
			if m.ID == nil && m.RequestID != nil {
				if req := f.get(inflightKey(session, m.RequestID)); req != nil {
					req.cancelled.Store(true)
					req.cancel()
				}
			}
			next.ServeHTTP(w, r)
			return
		}
		if m.Method == "" || m.ID == nil || m.Method == string(mcp.MethodInitialize) {
			next.ServeHTTP(w, r) // a notification or a response
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		key, req := inflightKey(session, m.ID), &inflightRequest{cancel: cancel}
		f.add(key, req)
		defer f.remove(key, req)
		tw := &touchedWriter{ResponseWriter: w}
		next.ServeHTTP(tw, r.WithContext(ctx))
		if req.cancelled.Load() && !tw.touched.Load() {
			// The HTTP response still needs a status. It is a stream
			// the server closes without the request's response, as the
			// transport allows; a 200 with an empty JSON body would be
			// no JSON-RPC message at all.
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
			w.WriteHeader(http.StatusOK)
		}
	})
}

// touchedWriter notes whether anything was written.
type touchedWriter struct {
	http.ResponseWriter
	touched atomic.Bool
}

func (w *touchedWriter) WriteHeader(status int) {
	w.touched.Store(true)
	w.ResponseWriter.WriteHeader(status)
}

func (w *touchedWriter) Write(p []byte) (int, error) {
	w.touched.Store(true)
	return w.ResponseWriter.Write(p)
}

// Flush keeps the response streamable: mcp-go upgrades to SSE only on a
// writer that flushes.
func (w *touchedWriter) Flush() {
	w.touched.Store(true)
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *touchedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// cancelShim answers a 2026-07-28 notifications/cancelled that carries no
// _meta: mcp-go would reject it with 400, and the official Go client then
// tears its whole session down. The request is already cancelled through
// its HTTP context.
func cancelShim(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := messageOf(r); m != nil && mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) &&
			m.ID == nil && m.Method == string(mcp.MethodNotificationCancelled) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		next.ServeHTTP(w, r)
	})
}
