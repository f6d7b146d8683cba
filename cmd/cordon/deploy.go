package main

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/internal/config"
	"github.com/cordonhq/cordon/internal/pathx"
	"github.com/cordonhq/cordon/internal/secrets"
	"github.com/cordonhq/cordon/sandbox"
)

// deployment is what the config files and the flags resolve to: the
// values the commands run with.
type deployment struct {
	// classes are the spawn classes' own settings ([profiles.*]), for
	// cordon wrap.
	classes map[string]classProfile
	// servedAt is the HTTP address this server listens on ("" on stdio):
	// the egress proxy never connects to it.
	servedAt    string
	settings    sandbox.Settings
	requirement sandbox.Requirement
	backend     string
	posture     approval.DerivedState
	gate        approval.Gate
	// passthrough is env_passthrough: variables a confined command
	// inherits beyond the allowlist.
	passthrough     []string
	approvalTimeout time.Duration
	bashTimeout     time.Duration
	maxOutput       int
	processesMax    int
	processBuffer   int
	httpAddr        string
	allowedOrigins  []string
	httpTokens      string
	idleTimeout     time.Duration
	drainTimeout    time.Duration

	// secrets are the [secrets] with their values, read by serve alone,
	// once at start (a SIGHUP keeps them).
	secrets []secrets.Secret

	cfg     *config.Config
	sources config.Sources
}

// deploy loads the configuration and turns it into a deployment. A
// problem in a config file is a usage error: nothing runs.
func deploy(src config.Sources) (deployment, error) {
	cfg, err := src.Load()
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			return deployment{}, &usageError{msg: err.Error(), cause: ce}
		}
		return deployment{}, err
	}
	return newDeployment(src, cfg), nil
}

// newDeployment turns a loaded configuration into a deployment. SIGHUP
// calls it again with what it reloaded.
func newDeployment(src config.Sources, cfg *config.Config) deployment {
	home := src.Home
	return deployment{
		classes: map[string]classProfile{
			classMCPServer: {network: config.MCPServerNetwork.Get(cfg), allowed: config.MCPServerAllowedDomains.Get(cfg),
				writable: expandPaths(config.MCPServerExtraWriteAllow.Get(cfg), home)},
			classExternalAgent: {network: config.AgentNetwork.Get(cfg), allowed: config.AgentAllowedDomains.Get(cfg),
				writable: expandPaths(config.AgentExtraWriteAllow.Get(cfg), home)},
		},
		settings: sandbox.Settings{
			Mode:            cfg.Derived.Mode,
			Network:         config.Network.Get(cfg),
			AllowedDomains:  config.AllowedDomains.Get(cfg),
			DeniedDomains:   config.DeniedDomains.Get(cfg),
			Workspace:       src.Workspace.V,
			FallbackRoot:    expandPath(config.FallbackRoot.Get(cfg), home),
			ExtraWriteAllow: expandPaths(config.ExtraWriteAllow.Get(cfg), home),
			ExtraReadDeny:   expandPaths(config.ExtraReadDeny.Get(cfg), home),
			SecretFiles:     config.SecretFiles(cfg.Secrets, home),
			ProtectedNames:  config.ProtectedPaths.Get(cfg),
			Home:            home,
			StateDir:        src.StateDir.V,
			ConfigDir:       config.DefaultConfigDir(home),
		},
		requirement:     config.Sandbox.Get(cfg),
		backend:         config.Backend.Get(cfg),
		posture:         cfg.Derived,
		gate:            approval.Gate{Policy: cfg.Derived.Approval, Rules: cfg.Rules},
		passthrough:     config.EnvPassthrough.Get(cfg),
		approvalTimeout: config.ApprovalTimeout.Get(cfg),
		bashTimeout:     config.BashTimeout.Get(cfg),
		maxOutput:       config.MaxOutputChars.Get(cfg),
		processesMax:    config.ProcessesMax.Get(cfg),
		processBuffer:   config.ProcessesMaxBufferChars.Get(cfg),
		httpAddr:        config.HTTPAddr.Get(cfg),
		allowedOrigins:  config.AllowedOrigins.Get(cfg),
		httpTokens:      config.HTTPTokens.Get(cfg),
		idleTimeout:     config.HTTPIdleTimeout.Get(cfg),
		drainTimeout:    config.HTTPDrainTimeout.Get(cfg),
		cfg:             cfg,
		sources:         src,
	}
}

func (d deployment) executor(warn func(string)) *sandbox.Executor {
	return &sandbox.Executor{
		Backends:    &sandbox.Backends{Forced: d.backend, StateDir: d.settings.StateDir},
		Requirement: d.requirement,
		Warn:        warn,
	}
}

// warnings prints the workspace widenings that were dropped.
func (d deployment) warnings(warn func(string)) {
	for _, w := range d.cfg.Warnings {
		warn(w.String())
	}
}

// expandPaths turns config paths ("~/x", "/y") into clean absolute ones.
func expandPaths(list []string, home string) []string {
	out := make([]string, 0, len(list))
	for _, p := range list {
		out = append(out, expandPath(p, home))
	}
	return out
}

func expandPath(p, home string) string {
	if p == "" {
		return ""
	}
	return filepath.Clean(pathx.ExpandHome(p, home))
}

// classProfile is one spawn class's [profiles.NAME]: its network replaces
// the global one, its lists add to the global ones.
type classProfile struct {
	network           sandbox.Network
	allowed, writable []string
}
