package sessionlog

// EffectiveSandboxMode folds the sandbox/mode events of a session, in log
// order, into the session's mode: the last one wins, whoever wrote it (the
// spec's session-scoped, last-write-wins rule). ok is false when there is
// none, and the caller falls back to the deployment default. It is also
// false when the last one does not parse (events from Read always do): a
// mode that could not be read must not be replaced by an older one, which
// may be wider.
func EffectiveSandboxMode(events []Event) (mode, source string, ok bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type != EventSandboxMode {
			continue
		}
		m, err := events[i].ModeData()
		if err != nil {
			return "", "", false
		}
		return m.Mode, m.Source, true
	}
	return "", "", false
}
