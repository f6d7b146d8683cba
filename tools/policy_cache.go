package tools

import (
	"strconv"
	"strings"
	"sync"

	"github.com/cordonhq/cordon/fsfence"
	"github.com/cordonhq/cordon/sandbox"
)

// Resolving a policy looks at some fifty paths (the workspace, the session
// tmp, every read-deny entry, a linked worktree's pointers), and a fresh
// fence resolves its entries again: together most of what a read_file
// cost. The toolbox therefore keeps each resolved policy for as long as an
// inotify watch over the paths it was derived from (its Inputs) reports no
// change, and one fence per distinct configuration, which validates its
// own entries the same way. A call thus sees the policy that resolving at
// that moment would give, as before; where nothing can be watched (not
// Linux, inotify exhausted) every call resolves afresh.
type policyCache struct {
	mu       sync.Mutex
	policies map[policyKey]cachedPolicy
	fences   map[string]*fsfence.Fence
}

// policyKey is everything of a request that Resolve reads, besides the
// file system and the settings (a Reload starts a new cache).
type policyKey struct {
	mode                    sandbox.Mode
	session, workspace, tmp string
	clientRoots             string
}

type cachedPolicy struct {
	pol   sandbox.ExecutionPolicy
	watch *fsfence.InputWatch
}

// maxCached bounds both maps; a server with more live sessions than this
// only resolves more often.
const maxCached = 256

func keyOf(req sandbox.Request, mode sandbox.Mode) policyKey {
	return policyKey{mode: mode, session: req.SessionID, workspace: req.Workspace, tmp: req.TmpDir,
		clientRoots: strings.Join(req.ClientRoots, "\x00")}
}

// resolve returns svc's policy for req, from the cache while its inputs
// are unchanged.
func (c *policyCache) resolve(svc *sandbox.PolicyService, req sandbox.Request) (sandbox.ExecutionPolicy, error) {
	key := keyOf(req, svc.ModeFor(req))
	c.mu.Lock()
	cached, ok := c.policies[key]
	c.mu.Unlock()
	if ok && cached.watch.Current() {
		return cached.pol, nil
	}
	first, err := svc.Resolve(req)
	if err != nil {
		return first, err
	}
	watch := fsfence.WatchInputs(first.Inputs)
	if !watch.Current() {
		return first, nil
	}
	// The watch covers only what is derived after it started: resolve
	// again, and keep the result if it is the same policy from the same
	// inputs (else something is changing it right now).
	again, err := svc.Resolve(req)
	if err != nil || !first.Equal(again) {
		return again, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.policies == nil || len(c.policies) >= maxCached {
		c.policies = map[policyKey]cachedPolicy{}
	}
	c.policies[key] = cachedPolicy{pol: again, watch: watch}
	return again, nil
}

// fence returns the fence for cfg, one per distinct configuration. A
// fence's configuration is lexical (paths), and it revalidates how those
// resolve at every check, so sharing one is as good as building one.
func (c *policyCache) fence(cfg fsfence.Config) (*fsfence.Fence, error) {
	key := fenceKey(cfg)
	c.mu.Lock()
	f := c.fences[key]
	c.mu.Unlock()
	if f != nil {
		return f, nil
	}
	f, err := fsfence.New(cfg)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fences == nil || len(c.fences) >= maxCached {
		c.fences = map[string]*fsfence.Fence{}
	}
	c.fences[key] = f
	return f, nil
}

// fenceKey names a fence config exactly (never a hash: two configs must
// never share a fence): each list its length, then each entry its length
// and bytes, in one allocation, since every file call computes it.
func fenceKey(cfg fsfence.Config) string {
	lists := [][]string{cfg.WritableRoots, cfg.Protected, cfg.ReadDeny, cfg.ProtectedNames, cfg.ProtectedFileNames}
	n := 0
	for _, l := range lists {
		n += 8
		for _, e := range l {
			n += len(e) + 8
		}
	}
	var b strings.Builder
	b.Grow(n)
	var num [20]byte
	for _, l := range lists {
		b.Write(strconv.AppendInt(num[:0], int64(len(l)), 10))
		b.WriteByte(';')
		for _, e := range l {
			b.Write(strconv.AppendInt(num[:0], int64(len(e)), 10))
			b.WriteByte(':')
			b.WriteString(e)
		}
	}
	return b.String()
}
