// Package tools implements cordon's tools — bash, read_file, write_file,
// edit_file, list_directory, glob, grep and sandbox_status — in plain Go
// types. Every call resolves its policy through the one
// sandbox.PolicyService, passes the approval gate, and then runs through
// the OS backend (bash) or the FS fence (file tools). Each tool is
// declared once, in table.go: its arguments and result as Go types, from
// which its JSON schemas and the strict decoding of its arguments are
// generated, and whether it writes, which the approval gate and the fence
// read from there. The MCP wiring lives in package mcpserver; this
// package knows nothing of MCP's protocol.
package tools
