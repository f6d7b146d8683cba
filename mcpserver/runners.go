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
		"read_file": func(ctx context.Context, call tools.Call, args map[string]any) (*tools.Result, *tools.ToolError) {
			var in tools.ReadFileInput
			if err := decodeArgs(args, &in, "path"); err != nil {
				return nil, invalidArgs("read_file", err)
			}
			return tb.ReadFile(ctx, call, in)
		},
		"write_file": func(ctx context.Context, call tools.Call, args map[string]any) (*tools.Result, *tools.ToolError) {
			var in tools.WriteFileInput
			if err := decodeArgs(args, &in, "path", "content"); err != nil {
				return nil, invalidArgs("write_file", err)
			}
			return tb.WriteFile(ctx, call, in)
		},
		"edit_file": func(ctx context.Context, call tools.Call, args map[string]any) (*tools.Result, *tools.ToolError) {
			var in tools.EditFileInput
			if err := decodeArgs(args, &in, "path", "old_string", "new_string"); err != nil {
				return nil, invalidArgs("edit_file", err)
			}
			return tb.EditFile(ctx, call, in)
		},
		"list_directory": func(ctx context.Context, call tools.Call, args map[string]any) (*tools.Result, *tools.ToolError) {
			var in tools.ListDirectoryInput
			if err := decodeArgs(args, &in); err != nil {
				return nil, invalidArgs("list_directory", err)
			}
			return tb.ListDirectory(ctx, call, in)
		},
		"glob": func(ctx context.Context, call tools.Call, args map[string]any) (*tools.Result, *tools.ToolError) {
			var in tools.GlobInput
			if err := decodeArgs(args, &in, "pattern"); err != nil {
				return nil, invalidArgs("glob", err)
			}
			return tb.Glob(ctx, call, in)
		},
		"grep": func(ctx context.Context, call tools.Call, args map[string]any) (*tools.Result, *tools.ToolError) {
			var in tools.GrepInput
			if err := decodeArgs(args, &in, "pattern"); err != nil {
				return nil, invalidArgs("grep", err)
			}
			return tb.Grep(ctx, call, in)
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
