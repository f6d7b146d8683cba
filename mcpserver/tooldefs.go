package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/cordonhq/cordon/tools"
	"github.com/mark3labs/mcp-go/mcp"
)

// mcpTool is the MCP form of one of cordon's tools, as the tool table
// (package tools) declares it.
func mcpTool(t tools.Tool) mcp.Tool {
	tool := mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, RawInputSchema: rawSchema(t.Name, t.InputSchema)}
	if t.OutputSchema != nil {
		tool.RawOutputSchema = rawSchema(t.Name, t.OutputSchema)
	}
	readOnly, destructive, idempotent, openWorld := t.ReadOnly, t.Destructive, t.Idempotent, t.OpenWorld
	tool.Annotations = mcp.ToolAnnotation{
		ReadOnlyHint: &readOnly, DestructiveHint: &destructive,
		IdempotentHint: &idempotent, OpenWorldHint: &openWorld,
	}
	return tool
}

func rawSchema(tool string, s any) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		// A generated schema always marshals; this is a bug in cordon.
		panic(fmt.Sprintf("mcpserver: the schema of %s: %v", tool, err))
	}
	return b
}
