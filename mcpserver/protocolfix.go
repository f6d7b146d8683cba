package mcpserver

// The protocol fixes: where cordon answers a message itself, before or
// instead of mcp-go (v1.2.1), because mcp-go's answer breaks a client or
// departs from JSON-RPC 2.0 or the MCP transports. Each lives in a file
// named protocolfix_*.go (the _http ones serve only Streamable HTTP, the
// others both transports), and each is there for one reason:
//
//   - protocolfix_message.go, parseMessage: a batch or a message that is
//     neither request nor response gets −32600 Invalid Request with what
//     to send instead, where mcp-go answers −32700 or 202 Accepted.
//   - protocolfix_cursor.go, Server.badCursor: a tools/list cursor that no
//     answer handed out gets −32602 with what to do, where mcp-go answers
//     a base64 decoder's error or a page nobody asked for.
//   - protocolfix_http_session.go, requireSessionID: a 2025 request without
//     Mcp-Session-Id gets 400, as the transport says, where mcp-go's 404
//     makes the client open new sessions again and again.
//   - protocolfix_http_cancel.go, inflight.track: a cancelled 2025 request
//     gets no response, as the protocol asks, where mcp-go writes the
//     killed command's result anyway; cancelShim: a 2026-07-28
//     notifications/cancelled without _meta gets 202, where mcp-go's 400
//     makes the official Go client tear its session down.
//   - elicit.go, clientCanElicit: cordon asks the human only through a
//     client that declared elicitation, since mcp-go sends the request
//     without checking and an undeclared one breaks the call.
