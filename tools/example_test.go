package tools_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/rs/zerolog"
)

// A toolbox serves the tools of every session of a deployment: a write in
// the workspace lands, one outside it is refused by the FS fence with the
// denial marker and an error code the model can act on, and a read of a
// credential under the home directory is refused the same way.
func ExampleToolbox() {
	base, err := os.MkdirTemp("", "tools-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(base)
	base, _ = filepath.EvalSymlinks(base)
	ws, home := filepath.Join(base, "project"), filepath.Join(base, "home")
	for _, d := range []string{ws, filepath.Join(home, ".ssh")} {
		_ = os.MkdirAll(d, 0o755)
	}
	_ = os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("key\n"), 0o600)
	tb := tools.New(tools.Config{
		Settings: sandbox.Settings{Mode: sandbox.WorkspaceWrite, Workspace: ws, Home: home,
			StateDir: filepath.Join(home, ".local/state/cordon"), ConfigDir: filepath.Join(home, ".config/cordon")},
		Executor: &sandbox.Executor{Backends: &sandbox.Backends{}, Requirement: sandbox.Required},
		Gate:     approval.Gate{Policy: approval.OnRequest},
		Logger:   zerolog.Nop(),
	})
	call := tools.Call{Session: &tools.Session{ID: "example"}}
	ctx := context.Background()

	_, terr := tb.WriteFile(ctx, call, tools.WriteFileInput{Path: filepath.Join(ws, "notes.txt"), Content: "hello\n"})
	fmt.Println("write in the workspace refused:", terr != nil)
	res, _ := tb.ReadFile(ctx, call, tools.ReadFileInput{Path: filepath.Join(ws, "notes.txt")})
	// The model gets numbered lines under a header naming the file.
	_, lines, _ := strings.Cut(res.Text, "\n")
	fmt.Printf("read back: %q\n", lines)

	_, terr = tb.WriteFile(ctx, call, tools.WriteFileInput{Path: filepath.Join(base, "elsewhere.txt"), Content: "x"})
	fmt.Println("write outside:", terr.Code, "denied:", terr.Denied)
	_, err = os.Stat(filepath.Join(base, "elsewhere.txt"))
	fmt.Println("it did not happen:", os.IsNotExist(err))

	_, terr = tb.ReadFile(ctx, call, tools.ReadFileInput{Path: filepath.Join(home, ".ssh", "id_ed25519")})
	fmt.Println("read of ~/.ssh:", terr.Code)
	// Output:
	// write in the workspace refused: false
	// read back: "     1\thello\n"
	// write outside: SANDBOX_DENIED denied: true
	// it did not happen: true
	// read of ~/.ssh: SANDBOX_DENIED
}
