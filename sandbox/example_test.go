package sandbox_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"

	"github.com/cordonhq/cordon/sandbox"
)

// A deployment's settings and one call's request resolve to the policy a
// backend enforces: the workspace and the session tmp writable, the
// credentials under the home directory unreadable.
func ExamplePolicyService_Resolve() {
	base, err := os.MkdirTemp("", "sandbox-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(base)
	base, _ = filepath.EvalSymlinks(base) // policies hold canonical paths
	ws, home, tmp := filepath.Join(base, "project"), filepath.Join(base, "home"), filepath.Join(base, "tmp")
	for _, d := range []string{ws, filepath.Join(home, ".ssh"), tmp} {
		_ = os.MkdirAll(d, 0o755)
	}
	svc := sandbox.PolicyService{Settings: sandbox.Settings{
		Mode: sandbox.WorkspaceWrite, Workspace: ws, Home: home,
		StateDir: filepath.Join(home, ".local/state/cordon"), ConfigDir: filepath.Join(home, ".config/cordon"),
	}}
	p, err := svc.Resolve(sandbox.Request{TmpDir: tmp})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("mode:", p.Mode, "network:", p.Network)
	fmt.Println("workspace writable:", slices.Contains(p.WritableRoots, ws))
	fmt.Println("session tmp writable:", slices.Contains(p.WritableRoots, tmp))
	fmt.Println("~/.ssh unreadable:", slices.Contains(p.ReadDeny, filepath.Join(home, ".ssh")))

	// The session's own mode (from its log) narrows the deployment's.
	p, _ = svc.Resolve(sandbox.Request{TmpDir: tmp, SessionMode: sandbox.ReadOnly})
	fmt.Println("session mode:", p.Mode, "writable:", slices.Contains(p.WritableRoots, ws))
	// Output:
	// mode: workspace-write network: allow
	// workspace writable: true
	// session tmp writable: true
	// ~/.ssh unreadable: true
	// session mode: read-only writable: false
}
