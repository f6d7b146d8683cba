package mcpserver

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

type obj = map[string]any

func str(desc string) obj { return obj{"type": "string", "description": desc} }
func integer(desc string, min, max int) obj {
	return obj{"type": "integer", "description": desc, "minimum": min, "maximum": max}
}
func boolean(desc string) obj { return obj{"type": "boolean", "description": desc} }

var escalationProps = obj{
	"sandbox_permissions": obj{"type": "string", "enum": []string{"workspace-write", "danger-full-access"},
		"description": "Ask the human for wider access for this call: the target mode. Requires justification. Only after a denial."},
	"justification": str("One sentence telling the human why this call needs wider access. Requires sandbox_permissions."),
}

func schema(required []string, props ...obj) json.RawMessage {
	all := obj{}
	for _, p := range props {
		for k, v := range p {
			all[k] = v
		}
	}
	s := obj{"type": "object", "properties": all, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	b, _ := json.Marshal(s)
	return b
}

// outputSchema lists a tool's structured fields plus the error fields
// every tool reports on a refusal.
func outputSchema(props obj) json.RawMessage {
	all := obj{
		"denied": boolean("true when the sandbox or the FS fence stopped the call"),
		"error": obj{"type": "object", "properties": obj{
			"code":    str("SANDBOX_UNAVAILABLE, SANDBOX_DENIED, RUNNER_FAILED, ESCALATION_NO_APPROVER, ESCALATION_DENIED, INVALID_ARGUMENT, NOT_FOUND, BINARY_FILE, TOO_LARGE or TIMEOUT"),
			"message": str("what happened and what to do")}},
	}
	for k, v := range props {
		all[k] = v
	}
	b, _ := json.Marshal(obj{"type": "object", "properties": all})
	return b
}

type hints struct{ readOnly, destructive, idempotent, openWorld bool }

func annotate(h hints) mcp.ToolOption {
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{
		ReadOnlyHint: &h.readOnly, DestructiveHint: &h.destructive,
		IdempotentHint: &h.idempotent, OpenWorldHint: &h.openWorld,
	})
}

var (
	readOnlyTool = hints{readOnly: true, idempotent: true}
	strArray     = obj{"type": "array", "items": obj{"type": "string"}}
)

func toolDefs() map[string]mcp.Tool {
	defs := map[string]mcp.Tool{}
	add := func(name, title, desc string, in, out json.RawMessage, h hints) {
		tool := mcp.Tool{Name: name, Title: title, Description: desc, RawInputSchema: in, RawOutputSchema: out}
		annotate(h)(&tool)
		defs[name] = tool
	}
	add("bash", "Run a shell command",
		"Run `bash -c COMMAND` in the workspace, confined by the sandbox. stdout and stderr are merged; long output keeps its head and tail. "+
			"A non-zero exit is a normal result. If the sandbox refuses a write, the result starts with [sandbox: file access denied …]: "+
			"retry with sandbox_permissions and a justification only if the write is really needed.",
		schema([]string{"command"}, obj{
			"command":    str("The shell command, run with bash -c."),
			"cwd":        str("Working directory (absolute, or relative to the workspace). Must exist. Default: the workspace."),
			"timeout_ms": integer("Kill the command (and everything it started) after this many milliseconds. Default 120000.", 1, 600000),
		}, escalationProps),
		outputSchema(obj{
			"exit_code": obj{"type": "integer"}, "output": obj{"type": "string"}, "timed_out": obj{"type": "boolean"},
			"truncated": obj{"type": "boolean"}, "mode": obj{"type": "string"}, "backend": obj{"type": "string"},
			"enforcement": obj{"type": "string"},
		}),
		hints{destructive: true, openWorld: true})
	add("read_file", "Read a file",
		"Read a text file (lines offset..offset+limit-1, numbered from 1) or an image (png, jpeg, gif, webp). Paths are absolute or relative to the workspace. "+
			"The text starts with a header line [PATH: lines A-B of N], with \", truncated\" when more lines follow or a long line was cut; "+
			"each line after it is its number, a tab, then the line verbatim. Credential locations (~/.ssh, ~/.aws, …) are never readable.",
		schema([]string{"path"}, obj{
			"path":   str("File to read."),
			"offset": integer("First line to return, 1-based. Default 1.", 1, 1<<31-1),
			"limit":  integer("How many lines to return. Default 2000.", 1, 1<<31-1),
		}),
		// No output schema and no structuredContent: Claude Code and Codex
		// show the model structuredContent instead of the text, and the
		// file's lines must reach it verbatim (SPEC §5).
		nil,
		readOnlyTool)
	add("write_file", "Write a file",
		"Create or replace a file atomically (parents are created, the mode of an existing file is kept). Writes only inside the writable roots; "+
			".git/hooks, .git/config, .cordon/ and shell start-up files stay read-only.",
		schema([]string{"path", "content"}, obj{
			"path":    str("File to write."),
			"content": str("The complete new content."),
		}, escalationProps),
		outputSchema(obj{"path": obj{"type": "string"}, "bytes_written": obj{"type": "integer"}, "created": obj{"type": "boolean"}}),
		hints{destructive: true, idempotent: true})
	add("edit_file", "Edit a file",
		"Replace old_string with new_string in a file, atomically, and return the unified diff. old_string must occur exactly once unless replace_all is true.",
		schema([]string{"path", "old_string", "new_string"}, obj{
			"path":        str("File to edit."),
			"old_string":  str("Exact text to replace."),
			"new_string":  str("Replacement text."),
			"replace_all": boolean("Replace every occurrence. Default false."),
		}, escalationProps),
		outputSchema(obj{"path": obj{"type": "string"}, "replacements": obj{"type": "integer"},
			"diff": obj{"type": "string", "description": "the unified diff of the change, as in the text"}}),
		hints{destructive: true})
	add("list_directory", "List a directory",
		"List a directory's entries with type and size, optionally recursively (depth 1..5). At most 1000 entries.",
		schema(nil, obj{
			"path":  str("Directory to list. Default: the workspace."),
			"depth": integer("How deep to recurse. Default 1.", 1, 5),
		}),
		outputSchema(obj{"path": obj{"type": "string"}, "entries": obj{"type": "array", "items": obj{"type": "object", "properties": obj{
			"path": obj{"type": "string"}, "type": obj{"type": "string", "enum": []string{"file", "dir", "symlink", "other"}}, "size": obj{"type": "integer"}}}},
			"truncated": obj{"type": "boolean"}}),
		readOnlyTool)
	add("glob", "Find files by pattern",
		"Find files matching a glob pattern such as **/*.go, newest first. Skips .git and what .gitignore ignores.",
		schema([]string{"pattern"}, obj{
			"pattern": str("Glob pattern; ** matches any number of directories."),
			"path":    str("Directory to search. Default: the workspace."),
		}),
		outputSchema(obj{"matches": strArray, "truncated": obj{"type": "boolean"},
			"total": obj{"type": "integer", "description": "how many files matched; more than len(matches) when truncated"}}),
		readOnlyTool)
	add("grep", "Search file contents",
		"Search files for a regular expression (RE2 syntax). Returns file:line:text matches. Skips .git, binary files and what .gitignore ignores.",
		schema([]string{"pattern"}, obj{
			"pattern":     str("RE2 regular expression."),
			"path":        str("File or directory to search. Default: the workspace."),
			"glob":        str("Only search files whose name matches this glob, e.g. *.go."),
			"ignore_case": boolean("Case-insensitive match."),
			"max_results": integer("At most this many matches. Default 200.", 1, 10000),
		}),
		outputSchema(obj{"matches": strArray, "truncated": obj{"type": "boolean"}}),
		readOnlyTool)
	add("sandbox_status", "Sandbox status",
		"Show the sandbox mode, where writes are allowed, what is protected or unreadable, the backend and its enforcement, and the approval policy.",
		schema(nil),
		outputSchema(obj{"mode": obj{"type": "string"}, "workspace_root": obj{"type": "string"}, "writable_roots": strArray,
			"protected_paths": strArray, "read_deny": strArray, "network": obj{"type": "string"}, "backend": obj{"type": "string"},
			"enforcement": obj{"type": "string"}, "status": obj{"type": "string"}, "approval": obj{"type": "string"}, "preset": obj{"type": "string"}}),
		readOnlyTool)
	return defs
}
