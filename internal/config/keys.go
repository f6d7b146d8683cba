package config

import (
	"time"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/internal/defaults"
	"github.com/cordonhq/cordon/sandbox"
)

// The keys, in the order of SPEC §8, which is the order `cordon status`
// lists them in. Each says, in this order: its name, a good value in TOML
// (for messages), its default, how a value is written and checked, and
// what a workspace file may do with it (workspace.go); then its flags, and
// why a running server cannot apply a change, if it cannot. A file may set
// nothing else: any other key is an error, and so is any value its check
// refuses.
//
// Keys are matched exactly (TOML keys are case-sensitive: MODE is an
// unknown key, not mode). No declaration may refer to another key (see
// declare).
var (
	// Preset names a mode and an approval in one word. A workspace file's
	// preset counts through its mode and approval (workspace.go); once
	// loaded, Preset is the preset Derive reports: custom when mode or
	// approval were set apart from the one named.
	Preset = scalar("preset", `"review"`, approval.Preset(""),
		text(approval.ParsePreset), nil).flag("--preset")

	// Mode is what confined commands may change.
	Mode = scalar("mode", `"workspace-write"`, approval.DefaultPreset.Mode(),
		text(sandbox.ParseMode), narrowerMode).flag("--mode")

	// Approval is when the human is asked.
	Approval = scalar("approval", `"ask-dangerous"`, approval.DefaultPreset.Approval(),
		text(approval.ParsePolicy), stricterApproval).flag("--approval")

	// Sandbox is what to do when no backend works.
	Sandbox = scalar("sandbox", `"required"`, sandbox.Required,
		text(sandbox.ParseRequirement), strongerRequirement).
		flagSets("--sandbox", "auto").flagSets("--no-sandbox", "off").flagSets("--sandbox-required", "required")

	// Backend forces a backend; auto detects one.
	Backend = scalar("backend", `"auto"`, "auto",
		text(backendName), unchanged("the backend is chosen by the machine's owner")).flag("--backend")

	// Network is whether confined commands may use the network, and
	// whether through the egress proxy only (restricted).
	Network = scalar("network", `"restricted"`, sandbox.NetworkAllow,
		text(sandbox.ParseNetwork), narrowerNetwork).flag("--network")

	// AllowedDomains and DeniedDomains are what the egress proxy of
	// network restricted lets through without asking, and refuses.
	AllowedDomains = list("allowed_domains", `["github.com", "*.npmjs.org"]`, domainEntry, narrows)
	DeniedDomains  = list("denied_domains", `["pastebin.com"]`, domainEntry, adds)

	// Workspace and StateDir come from the command line only (--workspace,
	// else the current directory; --state-dir, else the default): they are
	// keys so that status reports their origin with the rest.
	Workspace = commandLine("workspace")
	StateDir  = commandLine("state_dir")

	// FallbackRoot is where agents without a workspace write. Like every
	// path here it is kept as written ("~/" unexpanded), so that status
	// shows what the file says; the command expands it.
	FallbackRoot = scalar("fallback_root", `"/srv/agent"`, "", text(hostPath),
		unchanged("the fallback root is where agents without a workspace write"))

	// ExtraWriteAllow are writable roots beyond the workspace.
	ExtraWriteAllow = list("extra_write_allow", `["~/.cache/go-build"]`, hostPath,
		refused("would make more of the file system writable"))

	// ExtraReadDeny are paths confined commands may not read.
	ExtraReadDeny = list("extra_read_deny", `["~/company-secrets"]`, hostPath, adds)

	// ProtectedPaths are kept read-only inside each writable root.
	ProtectedPaths = list("protected_paths", `["deploy/keys"]`, protectedName, adds)

	// EnvPassthrough are variables a confined command inherits beyond the
	// allowlist.
	EnvPassthrough = list("env_passthrough", `["GOPATH"]`, envName,
		refused("would pass host variables into the sandbox"))

	// DangerousCommands are rules for ask-dangerous in the syntax of
	// approval.ParseRule (approval/rules.md), added to the default rules,
	// never replacing them.
	DangerousCommands = list("dangerous_commands", `["kubectl delete # deletes cluster resources"]`,
		nil, adds).checkedAs(dangerousRules)

	// ApprovalTimeout denies an approval request nobody answers.
	ApprovalTimeout = scalar("approval_timeout", `"5m"`, defaults.ApprovalTimeout,
		duration(0), shorter).flag("--approval-timeout").fixedAtStart("the server's approval timeout is fixed at start")

	// BashTimeout and MaxOutputChars are the bash tool's default timeout
	// and output cap, declared with the tools' in internal/defaults.
	BashTimeout    = scalar("bash.timeout", `"2m"`, defaults.BashTimeout, duration(defaults.MaxBashTimeout), shorter)
	MaxOutputChars = scalar("bash.max_output_chars", "30000", defaults.MaxOutputChars, count("characters"), lower)

	// ProcessesMax is how many background processes a session may keep,
	// and ProcessesMaxBufferChars how much of each one's unread output is
	// kept, declared with the tools' in internal/defaults.
	ProcessesMax            = scalar("processes.max", "16", defaults.ProcessesMax, count("processes"), lower)
	ProcessesMaxBufferChars = scalar("processes.max_buffer_chars", "1000000", defaults.ProcessBufferChars, count("characters"), lower)

	// The spawn classes of `cordon wrap` ([profiles.mcp_server],
	// [profiles.external_agent]): network replaces the global value for
	// the class, the lists add to the global ones.
	MCPServerNetwork = scalar("profiles.mcp_server.network", `"restricted"`, sandbox.NetworkAllow,
		text(sandbox.ParseNetwork), narrowerNetwork)
	MCPServerAllowedDomains  = list("profiles.mcp_server.allowed_domains", `["api.github.com"]`, domainEntry, narrows)
	MCPServerExtraWriteAllow = list("profiles.mcp_server.extra_write_allow", `["~/.cache/my-server"]`, hostPath,
		refused("would make more of the file system writable"))
	AgentNetwork = scalar("profiles.external_agent.network", `"restricted"`, sandbox.NetworkAllow,
		text(sandbox.ParseNetwork), narrowerNetwork)
	AgentAllowedDomains  = list("profiles.external_agent.allowed_domains", `["api.anthropic.com"]`, domainEntry, narrows)
	AgentExtraWriteAllow = list("profiles.external_agent.extra_write_allow", `["~/.cache/agent"]`, hostPath,
		refused("would make more of the file system writable"))

	// HTTPAddr is where `cordon serve --http config` listens.
	HTTPAddr = scalar("http.addr", `"127.0.0.1:8765"`, "",
		text(httpAddr), unchanged("a project does not choose where cordon listens")).fixedAtStart("the transport is chosen at start")

	// AllowedOrigins are the web origins the HTTP transport accepts.
	AllowedOrigins = list("http.allowed_origins", `["http://localhost:3000"]`, httpOrigin,
		refused("would let more web pages reach the server")).fixedAtStart("the HTTP guard is built at start")

	// HTTPTokens is the principals' token file (NAME TOKEN [WORKSPACE]
	// lines); "" is <state-dir>/http-tokens. The server re-reads the file
	// itself when it changes.
	HTTPTokens = scalar("http.tokens", `"~/.local/state/cordon/http-tokens"`, "", text(hostPath),
		unchanged("a project does not choose who may connect")).fixedAtStart("the token file is named at start")

	// HTTPIdleTimeout ends a principal's token session that sees no
	// request for that long; HTTPDrainTimeout is how long calls in flight
	// may take to finish after SIGTERM.
	HTTPIdleTimeout = scalar("http.idle_timeout", `"30m"`, 30*time.Minute,
		duration(0), shorter).fixedAtStart("the HTTP transport is set up at start")
	HTTPDrainTimeout = scalar("http.drain_timeout", `"30s"`, 30*time.Second,
		duration(0), shorter).fixedAtStart("the HTTP transport is set up at start")
)
