package tools

import (
	"fmt"
	"strings"

	"github.com/cordonhq/cordon/sandbox"
)

// Result is what a tool returns: text for the model, optional images, and
// the structuredContent that matches the tool's output schema. Some
// clients show the model only the text, others (Claude Code, Codex) only
// the structuredContent when there is one, so both carry the whole
// payload; read_file's is nil, so that its lines arrive verbatim.
type Result struct {
	Text       string
	Images     []Image
	Structured map[string]any
	IsError    bool
}

// Image is image content (read_file on a png/jpeg/gif/webp).
type Image struct {
	MIMEType string
	Data     []byte
}

// ToolError is a refusal or failure with a stable code from SPEC §10.
type ToolError struct {
	Code    string
	Message string
	// Denied marks a call that the sandbox or the fence stopped.
	Denied bool
	// Fields are tool-specific structured fields to report beside the error
	// (e.g. bash's exit_code and output).
	Fields map[string]any
	// hostKept are the host's versions of protected paths that the guard
	// set aside, for the session log (hostKept).
	hostKept []string
}

func (e *ToolError) Error() string { return e.Code + ": " + e.Message }

func errorf(code, format string, args ...any) *ToolError {
	return &ToolError{Code: code, Message: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) *ToolError {
	return errorf(CodeInvalidArgument, format, args...)
}

// denial builds the standard denial: the marker, what was denied, the
// escalation hint; the same for bash and the file tools.
func denial(tool string, mode sandbox.Mode, what string, extra ...string) *ToolError {
	lines := []string{DenialMarker(mode), what}
	lines = append(lines, extra...)
	if mode != sandbox.DangerFullAccess {
		lines = append(lines, EscalationHint(tool, mode))
	}
	return &ToolError{Code: CodeDenied, Message: strings.Join(lines, "\n"), Denied: true}
}

// AsResult turns a tool error into the result the model sees: the message
// as text, and again in structuredContent.error, for every tool (MCP ties
// structuredContent to an output schema only where one is declared, so
// read_file's errors may carry it too).
func (e *ToolError) AsResult() *Result {
	st := map[string]any{}
	for k, v := range e.Fields {
		st[k] = v
	}
	st["denied"] = e.Denied
	st["error"] = map[string]any{"code": e.Code, "message": e.Message}
	return &Result{Text: e.Message, Structured: st, IsError: true}
}
