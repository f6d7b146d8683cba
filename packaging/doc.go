// Package packaging holds what cordon ships besides its binaries: its
// MCP Registry entry (mcp-registry/), its Claude Desktop bundle manifest
// (mcpb/) and its npm wrapper (npm/). The scripts in scripts/ build them
// from the release archives; this package's tests check the entry against
// the registry's published schema.
package packaging
