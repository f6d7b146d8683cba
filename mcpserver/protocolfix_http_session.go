package mcpserver

import (
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// requireSessionID answers 400 to a request that carries no Mcp-Session-Id
// though it needs one: every request of a 2025 client but its initialize.
// The Streamable HTTP transport says a server that requires a session id
// SHOULD answer 400 then, and 404 to an id it does not know (or no longer
// knows); mcp-go v1.2.1 answers 404 to both, so a client without the header
// is told its session expired and starts a new one, again and again,
// instead of learning that it never sent the id. The 404 for an unknown id
// stays mcp-go's. A 2026-07-28 request has no protocol session and is not
// checked.
func requireSessionID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(server.HeaderKeySessionID) != "" || !needsSession(r) {
			next.ServeHTTP(w, r)
			return
		}
		const msg = "missing session id: every request but initialize carries the header " + server.HeaderKeySessionID +
			" with the id that the initialize response returned in its own " + server.HeaderKeySessionID + " header; " +
			"send it, or initialize to open a session"
		if m := messageOf(r); m != nil {
			writeRPCError(w, http.StatusBadRequest, m.ID, mcp.INVALID_REQUEST, msg)
			return
		}
		http.Error(w, msg, http.StatusBadRequest)
	})
}

func needsSession(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost:
		m := messageOf(r)
		// nil: not JSON, or not application/json, which mcp-go refuses.
		return m != nil && !m.Modern && m.Method != string(mcp.MethodInitialize)
	case http.MethodGet, http.MethodDelete:
		return !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
	}
	return false
}
