package sandbox_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/cordonhq/cordon/sandbox"
)

// Executor.Run runs a command under a policy to its end and names the
// ending. Here the policy is danger-full-access, which never reaches a
// backend, so the example runs on any machine; a confined mode runs the
// same way through the backend Backends selects.
func ExampleExecutor_Run() {
	var out strings.Builder
	ex := &sandbox.Executor{}
	res, err := ex.Run(context.Background(),
		sandbox.ExecutionPolicy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: "/"},
		sandbox.RunSpec{Argv: []string{"sh", "-c", "echo hello; exit 3"}, Stdout: &out, Stderr: &out})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q backend=%s exited=%v exit=%d\n", out.String(), res.Backend, res.Ending == sandbox.Exited, res.ExitCode)
	// Output:
	// "hello\n" backend=none exited=true exit=3
}
