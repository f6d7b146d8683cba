// Package tools implements cordon's tools — bash, read_file, write_file,
// edit_file, list_directory, glob, grep and sandbox_status — in plain Go
// types. Every call resolves its policy through the one
// sandbox.PolicyService, passes the approval gate, and then runs through
// the OS backend (bash) or the FS fence (file tools). The MCP wiring lives
// in package mcpserver; this package knows nothing of MCP.
package tools
