package mcpserver

import (
	"context"

	"github.com/cordonhq/cordon/tools"
)

// runners decode each tool's arguments and call the toolbox.
func (s *Server) runners() map[string]runner {
	tb := s.tb
	return map[string]runner{
		"bash": func(ctx context.Context, call tools.Call, args map[string]any) (*tools.Result, *tools.ToolError) {
			var in tools.BashInput
			if err := decodeArgs(args, &in, "command"); err != nil {
				return nil, invalidArgs("bash", err)
			}
			return tb.Bash(ctx, call, in)
		},
		"sandbox_status": func(ctx context.Context, call tools.Call, args map[string]any) (*tools.Result, *tools.ToolError) {
			var in struct{}
			if err := decodeArgs(args, &in); err != nil {
				return nil, invalidArgs("sandbox_status", err)
			}
			return tb.Status(call)
		},
	}
}

func invalidArgs(tool string, err error) *tools.ToolError {
	return &tools.ToolError{Code: "INVALID_ARGUMENT", Message: tool + ": " + err.Error()}
}
