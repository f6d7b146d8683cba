package tools

import (
	"context"
	"net"
	"strconv"
	"strings"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/internal/egress"
	"github.com/cordonhq/cordon/internal/secrets"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
)

// A command under network restricted reaches a host the lists do not name
// only if the human allows it while the connection waits: allow_once for
// the rest of the call, allow_session for the session's later calls too.

// egressHooks are a command's side of its egress proxy: decisions go to the
// session log, unlisted hosts to the human where the approval policy asks
// and the client can answer during the call.
func (tb *Toolbox) egressHooks(callCtx context.Context, call Call, pol sandbox.ExecutionPolicy, command string) sandbox.EgressHooks {
	conf := call.conf()
	hooks := sandbox.EgressHooks{
		Forbidden:  conf.EgressForbidden,
		ConfigHint: conf.ConfigHint,
		Decided: func(host string, port int, d egress.Decision) {
			call.Session.record(conf.Logger, sessionlog.EventNetworkDecision, map[string]any{"host": host, "port": port, "decision": d})
		},
	}
	if pol.Network == sandbox.NetworkRestricted && len(conf.Secrets) > 0 {
		hooks.Secrets = call.Session.secretVault(conf)
		hooks.SecretUsed = func(host string, port int, name string, r *secrets.Refusal) {
			data := map[string]any{"host": host, "port": port, "decision": "secret-injected", "secret": name}
			if r != nil {
				// Refusal's text names the secret and the host, never a value.
				data["decision"], data["reason"] = "secret-refused", r.Error()
				conf.Logger.Warn().Str("host", host).Int("port", port).Str("secret", name).
					Msg("egress proxy refused a request carrying a secret's sentinel to a host that is not the secret's")
				if call.Warn != nil {
					// The human, not only the model's 403, hears of it: a
					// command tried to send a credential where it may not go.
					call.Warn(r.Error() + " (a command of this session sent it; `cordon log` shows the session's network decisions)")
				}
			}
			call.Session.record(conf.Logger, sessionlog.EventNetworkDecision, data)
		}
	}
	if pol.Network != sandbox.NetworkRestricted || call.Asker == nil || conf.Gate.Policy == approval.Never {
		return hooks
	}
	hooks.Ask = func(connCtx context.Context, host string, port int) egress.Answer {
		// The question goes out on the call's context (it names the MCP
		// session), and is withdrawn when the connection waiting for it ends.
		ctx, cancel := context.WithCancel(callCtx)
		defer cancel()
		defer context.AfterFunc(connCtx, cancel)()
		target := net.JoinHostPort(host, strconv.Itoa(port))
		q := Question{Tool: NameBash, Subject: command, Current: pol.Mode, Host: target, HostNote: egress.Describe(host),
			AllowSession: call.Session.AllowSession}
		if q.Displayable() != nil {
			return egress.Refuse
		}
		d, err := call.Asker.Ask(ctx, q)
		if err != nil {
			call.logger().Info().Err(err).Str("host", target).Msg("network approval not obtained")
			return egress.Refuse
		}
		switch d {
		case approval.AllowOnce:
			return egress.AllowOnce
		case approval.AllowSession:
			if q.AllowSession {
				call.Session.allowHost(target)
				call.Session.record(conf.Logger, sessionlog.EventApprovalOutcome, map[string]any{
					"tool": NameBash, "subject": command, "host": target, "decision": d})
				return egress.AllowSession
			}
			return egress.AllowOnce
		}
		return egress.Refuse
	}
	return hooks
}

// blockedLine tells the model which hosts the proxy refused, and how the
// human can allow them.
func blockedLine(hosts []string) string {
	return "[network restricted: cordon's egress proxy refused " + strings.Join(hosts, ", ") +
		"; ask the human to add what the task needs to allowed_domains]"
}
