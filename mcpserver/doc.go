// Package mcpserver wires cordon's tools into an MCP server (mark3labs
// mcp-go): tool schemas and annotations, the stdio and Streamable HTTP
// transports with their authentication, per-session state, and approval
// through MCP elicitation in both protocol eras.
package mcpserver
