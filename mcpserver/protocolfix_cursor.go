package mcpserver

import (
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
)

// checkCursor (HTTP) and stdioTransport.receive (stdio) answer tools/list
// with a cursor that no tools/list answer could have handed out, before
// mcp-go does: mcp-go v1.2.1 answers a cursor
// that is not base64 with the decoder's error ("illegal base64 data at
// input byte 0"), which tells a person nothing they can act on, and takes
// one that is base64 but names no tool as a position in the list, giving a
// page that was never asked for. Its cursors are the base64 of the name of
// the last tool on the previous page, so a cursor must be that. (As cordon
// sets no page size, it lists every tool at once and hands out no cursor.)
func (s *Server) checkCursor(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := messageOf(r)
		if why := s.badCursor(m); why != "" {
			writeRPCError(w, http.StatusOK, m.ID, mcp.INVALID_PARAMS, why)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// badCursor says what is wrong with a tools/list message's cursor, or ""
// when there is nothing to refuse (another method, no cursor, a good one).
func (s *Server) badCursor(m *rpcMessage) string {
	if m == nil || m.Method != string(mcp.MethodToolsList) || m.Cursor == nil || isNull(m.Cursor) || s.validToolsCursor(m.Cursor) {
		return ""
	}
	shown := string(m.Cursor)
	var c string
	if json.Unmarshal(m.Cursor, &c) == nil {
		shown = c
	}
	return "invalid cursor " + quoted(shown) +
		": it is not one that a tools/list answer handed out; call tools/list again without a cursor to list the tools from the beginning"
}

func (s *Server) validToolsCursor(raw json.RawMessage) bool {
	var c string
	if json.Unmarshal(raw, &c) != nil {
		return false
	}
	if c == "" {
		return true // mcp-go reads "" as no cursor
	}
	name, err := base64.StdEncoding.DecodeString(c)
	return err == nil && s.mcp.GetTool(string(name)) != nil
}
