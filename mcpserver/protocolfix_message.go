package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
)

// Every message, a POST's body or a line of stdio, is checked against
// JSON-RPC 2.0 before mcp-go sees it (parseMessage; readMessage over HTTP,
// stdioTransport.receive on stdio). mcp-go v1.2.1 answers a batch (a JSON
// array) with −32700 Parse error, though the body is valid JSON, and
// answers 202 Accepted to an object with neither method nor result/error,
// as if it were a response; both are −32600 Invalid Request (JSON-RPC 2.0
// §5.1, and MCP 2025-06-18 removed batching: a message is sent alone).

// rpcMessage is what cordon's HTTP layer needs of a posted message.
type rpcMessage struct {
	ID        json.RawMessage // nil when absent
	Method    string
	Cursor    json.RawMessage // params.cursor
	RequestID json.RawMessage // params.requestId, of notifications/cancelled
	// Modern is a 2026-07-28 message, by its header or its _meta: it
	// belongs to no protocol session.
	Modern bool
}

type rpcMessageKey struct{}

// messageOf is the POST's message, once readMessage has checked it; nil for
// another method, or a body that is not JSON (mcp-go answers that).
func messageOf(r *http.Request) *rpcMessage {
	m, _ := r.Context().Value(rpcMessageKey{}).(*rpcMessage)
	return m
}

// readMessage reads a POST's body and answers −32600 to one that is JSON
// but not a single JSON-RPC message; the handlers after it find the
// message with messageOf and the body, unread, in r.Body.
func readMessage(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if r.Method != http.MethodPost || mt != "application/json" {
			next.ServeHTTP(w, r) // mcp-go refuses a wrong Content-Type
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				http.Error(w, fmt.Sprintf("request too large: cordon accepts at most %d MiB in one request", tooLarge.Limit>>20), http.StatusRequestEntityTooLarge)
			} else {
				http.Error(w, "the request body could not be read: "+err.Error(), http.StatusBadRequest)
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !json.Valid(body) {
			writeRPCError(w, http.StatusBadRequest, nil, mcp.PARSE_ERROR,
				notJSON(overHTTP))
			return
		}
		m, id, problem := parseMessage(body, overHTTP)
		if problem != "" {
			writeRPCError(w, http.StatusBadRequest, id, mcp.INVALID_REQUEST, "invalid request: "+problem)
			return
		}
		m.Modern = m.Modern || mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), rpcMessageKey{}, m)))
	})
}

// framing names what carries one message, for the errors that say so.
type framing struct{ carrier, unit string }

var (
	overHTTP  = framing{"request body", "POST"}
	overStdio = framing{"line", "line"}
)

// parseMessage checks that body (valid JSON) is one JSON-RPC message: a
// request or notification (a method, a string), or a response (result or
// error, and the id it answers). Otherwise it says what is wrong, and
// returns the id when there is one to answer to.
func parseMessage(body []byte, in framing) (m *rpcMessage, id json.RawMessage, problem string) {
	switch bytes.TrimLeft(body, " \t\r\n")[0] {
	case '[':
		return nil, nil, fmt.Sprintf("the %s is a JSON array, a JSON-RPC batch, and MCP does not support batches (since protocol version 2025-06-18): send each message as a %s of its own", in.carrier, in.unit)
	case '{':
	default:
		return nil, nil, fmt.Sprintf("the %s is not a JSON object: send one JSON-RPC 2.0 message, a JSON object, per %s", in.carrier, in.unit)
	}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &env) != nil {
		return nil, nil, "the message is not a JSON-RPC 2.0 message"
	}
	m = &rpcMessage{}
	if env.ID != nil && !isNull(env.ID) {
		var s string
		var n float64
		if json.Unmarshal(env.ID, &s) != nil && json.Unmarshal(env.ID, &n) != nil {
			return nil, nil, `"id" must be a string or a number`
		}
		m.ID = env.ID
	}
	switch {
	case env.Method != nil:
		if json.Unmarshal(env.Method, &m.Method) != nil || m.Method == "" {
			return nil, m.ID, `"method" must be a non-empty string, the name of the method to call`
		}
		if env.Result != nil || env.Error != nil {
			return nil, m.ID, `a message has either "method" (a request or notification) or "result"/"error" (a response), not both`
		}
	case env.Result != nil || env.Error != nil:
		if env.Result != nil && env.Error != nil {
			return nil, m.ID, `a response has "result" or "error", not both`
		}
		if m.ID == nil {
			return nil, nil, `a response needs the "id" of the request it answers`
		}
	default:
		return nil, m.ID, `the message has neither "method" (a request or notification) nor "result" or "error" (a response)`
	}
	var params struct {
		Cursor    json.RawMessage `json:"cursor"`
		RequestID json.RawMessage `json:"requestId"`
		Meta      *mcp.Meta       `json:"_meta"`
	}
	if len(env.Params) > 0 && json.Unmarshal(env.Params, &params) == nil {
		m.Cursor, m.RequestID = params.Cursor, params.RequestID
		m.Modern = mcp.IsModernProtocol(params.Meta.ProtocolVersion())
	}
	return m, m.ID, ""
}

// notJSON is the −32700 message for what is not JSON at all.
func notJSON(in framing) string {
	return fmt.Sprintf("parse error: the %s is not valid JSON; send one JSON-RPC 2.0 message, a JSON object, per %s", in.carrier, in.unit)
}

func isNull(raw json.RawMessage) bool { return raw != nil && string(bytes.TrimSpace(raw)) == "null" }

// rpcError is a JSON-RPC error response.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcErrorDetail  `json:"error"`
}

type rpcErrorDetail struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// writeRPCError answers with a JSON-RPC error response; id nil is null.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(rpcError{JSONRPC: "2.0", ID: id, Error: rpcErrorDetail{code, message}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
