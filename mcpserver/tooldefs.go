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
	in, out := toolSchemas(t)
	tool := mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, RawInputSchema: in, RawOutputSchema: out}
	readOnly, destructive, idempotent, openWorld := t.ReadOnly, t.Destructive, t.Idempotent, t.OpenWorld
	tool.Annotations = mcp.ToolAnnotation{
		ReadOnlyHint: &readOnly, DestructiveHint: &destructive,
		IdempotentHint: &idempotent, OpenWorldHint: &openWorld,
	}
	return tool
}

// toolSchemas are a tool's input and output schemas as JSON. Rendering
// them takes jsonschema-go 1.6 ms for the whole table, a tenth of the
// server's start-up, so they are rendered ahead of time
// (tooldefs_gen.go, which TestToolSchemasAreCurrent keeps current); a
// tool missing there is rendered here.
func toolSchemas(t tools.Tool) (in, out json.RawMessage) {
	if g, ok := generatedSchemas[t.Name]; ok {
		return json.RawMessage(g.in), rawOrNil(g.out)
	}
	return renderSchemas(t)
}

func renderSchemas(t tools.Tool) (in, out json.RawMessage) {
	in = rawSchema(t.Name, t.InputSchema())
	if t.OutputSchema() != nil {
		out = rawSchema(t.Name, t.OutputSchema())
	}
	return in, out
}

func rawOrNil(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// generatedSchema is one tool's schemas in tooldefs_gen.go.
type generatedSchema struct{ in, out string }

func rawSchema(tool string, s any) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		// A generated schema always marshals; this is a bug in cordon.
		panic(fmt.Sprintf("mcpserver: the schema of %s: %v", tool, err))
	}
	return b
}
