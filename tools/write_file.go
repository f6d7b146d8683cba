package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/cordonhq/cordon/fsfence"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
)

// WriteFileInput are the write_file tool's arguments.
type WriteFileInput struct {
	Path    string `json:"path" jsonschema:"File to write."`
	Content string `json:"content" jsonschema:"The complete new content; with append, the text to add at the end."`
	Append  bool   `json:"append,omitempty" jsonschema:"Add content at the end of the file instead of replacing it; a missing file is created. Default false."`
	Escalation
}

// WriteFileOutput is the write_file tool's structuredContent.
type WriteFileOutput struct {
	Path         string `json:"path"`
	BytesWritten int    `json:"bytes_written"`
	Created      bool   `json:"created"`
}

// WriteFile creates or atomically replaces a file through the FS fence,
// under the policy that the approval gate settled on (an approved
// escalation included), or with Append adds to its end. Parents are
// created; an existing file keeps its mode.
func (tb *Toolbox) WriteFile(ctx context.Context, call Call, in WriteFileInput) (*Result, *ToolError) {
	call = tb.pin(call)
	fields := map[string]any{"bytes": len(in.Content)}
	if in.Append {
		fields["append"] = true
	}
	path, pol, f, terr := tb.prepareWrite(ctx, call, NameWriteFile, in.Path, in.SandboxPermissions, in.Justification, fields)
	if terr != nil {
		return nil, terr
	}
	var res fsfence.WriteResult
	var err error
	if in.Append {
		res, err = appendFile(f, path, []byte(in.Content))
	} else {
		res, err = f.WriteFile(path, []byte(in.Content))
	}
	if err != nil {
		terr := fenceError(NameWriteFile, pol, path, err)
		if in.Append && errors.Is(err, fsfence.ErrTooLarge) {
			terr = errorf(CodeTooLarge, "%s is larger than %s, the most write_file appends to (an append rewrites the file atomically): append with bash instead (e.g. cat >> FILE)",
				path, formatSize(fsfence.MaxEditSize))
		}
		call.Session.record(call.conf().Logger, sessionlog.EventToolResult, map[string]any{"tool": NameWriteFile, "path": path, "error": terr.Code})
		return nil, terr
	}
	call.Session.record(call.conf().Logger, sessionlog.EventToolResult, map[string]any{
		"tool": NameWriteFile, "path": path, "bytes_written": res.Bytes, "created": res.Created})
	text := fmt.Sprintf("Updated %s (%s)", path, formatSize(int64(res.Bytes)))
	switch {
	case res.Created:
		text = fmt.Sprintf("Created %s (%s)", path, formatSize(int64(res.Bytes)))
	case in.Append:
		text = fmt.Sprintf("Appended %s to %s", formatSize(int64(res.Bytes)), path)
	}
	return &Result{
		Text:       text,
		Structured: structured(WriteFileOutput{Path: path, BytesWritten: res.Bytes, Created: res.Created}),
	}, nil
}

// appendFile adds data at the end of the file at path, or creates the file
// (and its parents) when there is none. It is atomic like every write of
// the file tools: the old content and data go to a new file that replaces
// the old one, through the fence's Edit, so a crash leaves the file as it
// was or with data added, never half of it. Bytes is the length of data.
// A file that another process creates between Edit finding none and the
// write is replaced, as write_file without append would replace it.
func appendFile(f *fsfence.Fence, path string, data []byte) (fsfence.WriteResult, error) {
	res, err := f.Edit(path, func(old []byte) ([]byte, error) {
		return append(old[:len(old):len(old)], data...), nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return f.WriteFile(path, data)
	}
	res.Bytes = len(data)
	return res, err
}

// writePath resolves the path of a writing tool before the approval gate,
// so that the human is asked about the absolute path, and a call that
// cannot run fails without asking anyone: a bad path, or, when no wider
// mode is requested, a write that the fence refuses under the current
// policy (the refusal is logged like any other). The check has no side
// effects. The workspace root does not depend on the mode, so an approved
// escalation does not move the path.
func (tb *Toolbox) writePath(call Call, tool, p, permissions string) (string, *ToolError) {
	if p == "" {
		return "", invalid("path is empty: give a file path (absolute, or relative to the workspace)")
	}
	pol, terr := tb.resolve(call, "")
	if terr != nil {
		return "", terr
	}
	if permissions == "" {
		if terr := refusedPolicy(pol); terr != nil {
			return "", terr
		}
	}
	path, terr := toolPath(pol, p, false)
	if terr != nil || permissions != "" {
		return path, terr
	}
	f, terr := tb.fence(call, pol)
	if terr != nil {
		return "", terr
	}
	if err := f.CheckWrite(path); errors.Is(err, fsfence.ErrDenied) {
		terr := fenceError(tool, pol, path, err)
		call.Session.record(call.conf().Logger, sessionlog.EventToolCall, map[string]any{"tool": tool, "path": path, "mode": pol.Mode})
		call.Session.record(call.conf().Logger, sessionlog.EventToolResult, map[string]any{"tool": tool, "path": path, "error": terr.Code})
		return "", terr
	}
	return path, nil
}

// prepareWrite is what write_file and edit_file do before touching the
// file: resolve the path, pass the escalation ladder and the approval gate,
// build the fence from the resulting policy and log the call.
func (tb *Toolbox) prepareWrite(ctx context.Context, call Call, tool, rawPath, permissions, justification string, logFields map[string]any) (string, sandbox.ExecutionPolicy, *fsfence.Fence, *ToolError) {
	path, terr := tb.writePath(call, tool, rawPath, permissions)
	if terr != nil {
		return "", sandbox.ExecutionPolicy{}, nil, terr
	}
	var approved approvedEffect
	pol, terr := tb.authorize(ctx, call, authRequest{tool: tool, subject: path, Escalation: Escalation{SandboxPermissions: permissions, Justification: justification},
		effect: func(sandbox.ExecutionPolicy) (Effect, *ToolError) { return pathEffect(path), nil }, approved: &approved})
	if terr != nil {
		return "", pol, nil, terr
	}
	if terr := refusedPolicy(pol); terr != nil {
		return "", pol, nil, terr
	}
	f, terr := tb.fence(call, pol)
	if terr != nil {
		return "", pol, nil, terr
	}
	if terr := approved.check(); terr != nil {
		// The path leads elsewhere than the human was shown: nothing is written.
		call.Session.record(call.conf().Logger, sessionlog.EventToolResult, map[string]any{"tool": tool, "path": path, "error": terr.Code})
		return "", pol, nil, terr
	}
	fields := map[string]any{"tool": tool, "path": path, "mode": pol.Mode}
	for k, v := range logFields {
		fields[k] = v
	}
	call.Session.record(call.conf().Logger, sessionlog.EventToolCall, fields)
	return path, pol, f, nil
}
