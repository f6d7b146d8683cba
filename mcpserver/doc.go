// Package mcpserver wires cordon's tools into an MCP server (mark3labs
// mcp-go): each tool of package tools' table as an MCP tool, with the
// schemas and annotations the table declares, the stdio and Streamable HTTP
// transports with their authentication, per-session state, and approval
// through MCP elicitation in both protocol eras.
package mcpserver
