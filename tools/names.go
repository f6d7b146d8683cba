package tools

import "github.com/cordonhq/cordon/approval"

// The tools' names, declared once: the table (table.go) and every other
// place that means a tool refers to them. TestToolNames fails when a tool
// of the table has no constant here, or a constant names no tool.
const (
	// NameBash is approval.ShellTool: the approval gate, below this
	// package, reads a bash call's command with its dangerous-command
	// rules, so the name is declared there.
	NameBash          = approval.ShellTool
	NameProcessOutput = "process_output"
	NameProcessInput  = "process_input"
	NameProcessKill   = "process_kill"
	NameProcessList   = "process_list"
	NameReadFile      = "read_file"
	NameWriteFile     = "write_file"
	NameEditFile      = "edit_file"
	NameListDirectory = "list_directory"
	NameGlob          = "glob"
	NameGrep          = "grep"
	NameSandboxStatus = "sandbox_status"
)
