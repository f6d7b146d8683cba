package tools

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Tool is one of cordon's tools, declared once in the table below: what a
// client is told about it and how a call of it runs. Its schemas are
// generated from the handler's argument type and the declared result type,
// so a new parameter is one field of the argument struct (json, jsonschema
// and schema tags: see schema.go), and a new tool is one entry here.
type Tool struct {
	Name        string
	Title       string
	Description string
	// ReadOnly says the tool never writes. It is MCP's readOnlyHint; the
	// approval policy "always" does not ask before such a tool; and its
	// denials carry no escalation hint, since no mode makes a read-deny
	// path readable (such tools have no sandbox_permissions either).
	ReadOnly bool
	// Destructive, Idempotent and OpenWorld are MCP's destructiveHint,
	// idempotentHint and openWorldHint.
	Destructive, Idempotent, OpenWorld bool

	// schemas are worked out on first use: reflecting over every tool's
	// types took a tenth of the server's start-up, and the server lists
	// the tools from schemas rendered ahead of time (mcpserver/tooldefs).
	schemas func() toolSchemas
	run     func(ctx context.Context, tb *Toolbox, call Call, args map[string]any) (*Result, *ToolError)
}

type toolSchemas struct{ in, out *jsonschema.Schema }

// InputSchema is the schema of the arguments.
func (t Tool) InputSchema() *jsonschema.Schema { return t.schemas().in }

// OutputSchema is the schema of the structuredContent, or nil for a tool
// whose result is text only (read_file: SPEC §5).
func (t Tool) OutputSchema() *jsonschema.Schema { return t.schemas().out }

// table is every tool, in the order clients list them.
var table = []Tool{
	define[BashOutput](Tool{Name: NameBash, Title: "Run a shell command",
		Description: "Run `bash -c COMMAND` in the workspace, confined by the sandbox. stdout and stderr are merged; long output keeps its head and tail. " +
			"A non-zero exit is a normal result. If the sandbox refuses a write, the result starts with [sandbox: file access denied …]: " +
			"retry with sandbox_permissions and a justification only if the write is really needed.",
		Destructive: true, OpenWorld: true}, (*Toolbox).Bash),
	define[ProcessOutput](Tool{Name: NameProcessOutput, Title: "Read a background process's output",
		Description: "Return what a background process (bash with background: true) wrote since the last read. With wait_ms, wait up to that long for new output or its exit, " +
			"returning as soon as either comes: wait instead of calling again and again.",
		ReadOnly: true}, (*Toolbox).ProcessOutputTool),
	define[ProcessOutput](Tool{Name: NameProcessInput, Title: "Write to a background process",
		Description: "Write text to a background process's stdin or terminal (end lines with \\n; \\u0003 is Ctrl-C, \\u0004 Ctrl-D) and return what it wrote back within wait_ms (default 500). " +
			"The input passes the same approval as a bash command.",
		Destructive: true, OpenWorld: true}, (*Toolbox).ProcessInputTool),
	define[ProcessKillOutput](Tool{Name: NameProcessKill, Title: "End a background process",
		Description: "End a background process and every process it started: TERM (default; KILL follows 2 s later), INT, or KILL.",
		Destructive: true, Idempotent: true}, (*Toolbox).ProcessKillTool),
	define[ProcessListOutput](Tool{Name: NameProcessList, Title: "List background processes",
		Description: "List this session's background processes: id, command, cwd, mode, start time, whether it runs, its exit code.",
		ReadOnly:    true, Idempotent: true}, (*Toolbox).ProcessListTool),
	// No output schema and no structuredContent: Claude Code and Codex
	// show the model structuredContent instead of the text, and the file's
	// lines must reach it verbatim (SPEC §5).
	define[textOnly](Tool{Name: NameReadFile, Title: "Read a file",
		Description: "Read a text file (lines offset..offset+limit-1, numbered from 1) or an image (png, jpeg, gif, webp). Paths are absolute or relative to the workspace. " +
			"A negative offset counts from the end: offset -20 gives the last 20 lines, however large the file, without reading the rest of it. " +
			"The text starts with a header line [PATH: lines A-B of N], with \", truncated\" when more lines follow or a long line was cut; " +
			"each line after it is its number, a tab, then the line verbatim. Where the file is too large to count its lines cheaply, the lines of a negative offset " +
			"are numbered from the end (-1 is the last) and the header says [PATH: lines -A to -B counted from the end, of more than N]. " +
			"Credential locations (~/.ssh, ~/.aws, …) are never readable.",
		ReadOnly: true, Idempotent: true}, (*Toolbox).ReadFile),
	// Not idempotent: the same append, called again, adds again.
	define[WriteFileOutput](Tool{Name: NameWriteFile, Title: "Write a file",
		Description: "Create or replace a file atomically (parents are created, the mode of an existing file is kept); with append, add content at its end instead. Writes only inside the writable roots; " +
			".git/hooks, .git/config, .cordon/ and shell start-up files stay read-only.",
		Destructive: true}, (*Toolbox).WriteFile),
	define[EditFileOutput](Tool{Name: NameEditFile, Title: "Edit a file",
		Description: "Replace old_string with new_string in a file, atomically, and return the unified diff. old_string must occur exactly once unless replace_all is true, " +
			"or exactly expected_replacements times when that is given (all of them are replaced; any other count fails and changes nothing).",
		Destructive: true}, (*Toolbox).EditFile),
	define[ListDirectoryOutput](Tool{Name: NameListDirectory, Title: "List a directory",
		Description: "List a directory's entries with type and size, optionally recursively (depth 1..5). At most 1000 entries.",
		ReadOnly:    true, Idempotent: true}, (*Toolbox).ListDirectory),
	define[GlobOutput](Tool{Name: NameGlob, Title: "Find files by pattern",
		Description: "Find files matching a glob pattern such as **/*.go, newest first. Skips .git and what .gitignore ignores.",
		ReadOnly:    true, Idempotent: true}, (*Toolbox).Glob),
	define[GrepOutput](Tool{Name: NameGrep, Title: "Search file contents",
		Description: "Search files for a regular expression (RE2 syntax), or a plain string with literal. Returns file:line:text matches; with context N, also the N lines before and after each " +
			"(file-line-text, -- between groups that are not adjacent, as grep -C). output files returns only the paths of the files that match, output count file:N for each. " +
			"Skips .git, binary files and what .gitignore ignores.",
		ReadOnly: true, Idempotent: true}, (*Toolbox).Grep),
	define[StatusOutput](Tool{Name: NameSandboxStatus, Title: "Sandbox status",
		Description: "Show the sandbox mode, where writes are allowed, what is protected or unreadable, the backend and its enforcement, and the approval policy.",
		ReadOnly:    true, Idempotent: true}, (*Toolbox).Status),
}

// Tools returns every tool, in the order clients list them. The schemas
// are the table's own: read them, do not change them.
func Tools() []Tool {
	out := make([]Tool, len(table))
	copy(out, table)
	return out
}

// Run decodes a call's arguments, strictly, and runs the tool.
func (t Tool) Run(ctx context.Context, tb *Toolbox, call Call, args map[string]any) (*Result, *ToolError) {
	return t.run(ctx, tb, call, args)
}

// textOnly is the result type of a tool without structuredContent.
type textOnly struct{}

// define completes a tool's declaration from its handler, whose argument
// type In gives the input schema and the decoding, and from Out, the type
// of its structuredContent. A bad declaration (a schema tag that does not
// parse) panics when the schemas are first used: TestToolTable uses every
// tool's.
func define[Out, In any](t Tool, handler func(*Toolbox, context.Context, Call, In) (*Result, *ToolError)) Tool {
	t.schemas = sync.OnceValue(func() toolSchemas {
		in, err := inputSchema(reflect.TypeFor[In]())
		if err != nil {
			panic(fmt.Sprintf("tools: the arguments of %s: %v", t.Name, err))
		}
		var out *jsonschema.Schema
		if ot := reflect.TypeFor[Out](); ot != reflect.TypeFor[textOnly]() {
			if out, err = outputSchema(ot); err != nil {
				panic(fmt.Sprintf("tools: the result of %s: %v", t.Name, err))
			}
		}
		return toolSchemas{in, out}
	})
	schemas := t.schemas
	t.run = func(ctx context.Context, tb *Toolbox, call Call, args map[string]any) (*Result, *ToolError) {
		var in In
		if err := decodeArgs(args, &in, schemas().in.Required); err != nil {
			return nil, invalid("%s: %v", t.Name, err)
		}
		return handler(tb, ctx, call, in)
	}
	return t
}

// readOnly names the tools that never write, from the table. It is filled
// in by init, not by its initializer: the handlers in the table use it.
var readOnly = map[string]bool{}

func init() {
	for _, t := range table {
		if t.ReadOnly {
			readOnly[t.Name] = true
		}
	}
}
