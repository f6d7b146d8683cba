package approval_test

import (
	"fmt"
	"log"

	"github.com/cordonhq/cordon/approval"
)

// Gate is what the tool layer asks before every call: the deployment's
// policy with its dangerous-command rules, here the default ones and a
// rule of its own. A read-only tool is never asked about.
func ExampleGate_Decide() {
	own, err := approval.ParseRules([]string{"kubectl delete # deletes cluster resources"})
	if err != nil {
		log.Fatal(err)
	}
	gate := approval.Gate{Policy: approval.AskDangerous, Rules: append(approval.DefaultRules(), own...)}
	for _, c := range []approval.Call{
		{Tool: "bash", Command: "go test ./..."},
		{Tool: "bash", Command: "kubectl delete pod web-1"},
		{Tool: "read_file", ReadOnly: true},
	} {
		d := gate.Decide(c)
		fmt.Printf("%s %q: %s\n", d.Action, c.Command, d.Reason)
	}
	// Output:
	// allow "go test ./...": command not classified dangerous
	// ask "kubectl delete pod web-1": dangerous command: kubectl delete pod web-1 (deletes cluster resources)
	// allow "": approval policy "ask-dangerous" asks only for escalations and dangerous commands
}
