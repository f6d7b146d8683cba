package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cordonhq/cordon/internal/principal"
	"github.com/spf13/cobra"
)

// `cordon token` manages the HTTP principals of <state-dir>/http-tokens:
// clients that each get a token of their own, and with it their own
// sessions, logs, process ids and, optionally, workspace. A running
// server re-reads the file when it changes.
func newTokenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token add|list|revoke",
		Short: "give HTTP clients tokens of their own (principals)",
		Long: `Each principal has its own token, sessions, logs and process ids, and
never a view of another's. The tokens live in <state-dir>/http-tokens
(mode 0600; only a SHA-256 of each token is kept), which a running
cordon serve --http re-reads when it changes: a new token works at once,
and a revoked one's sessions end at once.`,
		Args: noArgs,
	}
	var workspace string
	add := &cobra.Command{
		Use:   "add NAME [--workspace DIR]",
		Short: "add a principal; its new token is printed once, alone on stdout",
		Args:  cobra.ExactArgs(1),
	}
	addState := stateDirFlag(add)
	add.Flags().StringVar(&workspace, "workspace", "", "the principal's own workspace `DIR` (default: the server's)")
	completeDirs(add, "workspace")
	add.RunE = func(cmd *cobra.Command, args []string) error {
		ws := ""
		if workspace != "" {
			abs, err := filepath.Abs(workspace)
			if err != nil {
				return usagef("--workspace %q: %v", workspace, err)
			}
			if st, err := os.Stat(abs); err != nil || !st.IsDir() {
				return usagef("--workspace %q: not a directory", workspace)
			}
			ws = abs
		}
		if err := principal.ValidateName(args[0]); err != nil {
			return usagef("%v", err)
		}
		token, err := principal.Add(tokensFile(addState()), args[0], ws)
		if err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), token)
		fmt.Fprintf(cmd.ErrOrStderr(), "cordon: added principal %s; its token is shown once: keep it, cordon keeps only its hash\n", args[0])
		return nil
	}
	list := &cobra.Command{Use: "list", Short: "list the principals (names and workspaces, never tokens)", Args: noArgs}
	listState := stateDirFlag(list)
	list.RunE = func(cmd *cobra.Command, _ []string) error {
		return listPrincipals(tokensFile(listState()), cmd.OutOrStdout())
	}
	revoke := &cobra.Command{Use: "revoke NAME", Short: "remove a principal; a running server ends its sessions at once", Args: cobra.ExactArgs(1)}
	revokeState := stateDirFlag(revoke)
	revoke.RunE = func(cmd *cobra.Command, args []string) error {
		return principal.Revoke(tokensFile(revokeState()), args[0])
	}
	cmd.AddCommand(add, list, revoke)
	return cmd
}

func tokensFile(stateDir string) string { return filepath.Join(stateDir, principal.FileName) }

func listPrincipals(path string, w io.Writer) error {
	list, err := principal.Load(path)
	if err != nil {
		return err
	}
	for _, p := range list {
		ws := p.Workspace
		if ws == "" {
			ws = "-"
		}
		fmt.Fprintf(w, "%s\t%s\n", p.Name, ws)
	}
	return nil
}
