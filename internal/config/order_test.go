package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeyOrder: keys, and so `cordon status` and every message, list the
// keys in the order keys.go declares them. A declaration that refers to a
// later package variable would be initialised late, and move (see
// declare).
func TestKeyOrder(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "keys.go", nil, 0)
	require.NoError(t, err)
	var declared []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if id, ok := call.Fun.(*ast.Ident); ok && (id.Name == "scalar" || id.Name == "list" || id.Name == "commandLine") {
			lit := call.Args[0].(*ast.BasicLit)
			name, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			declared = append(declared, name)
		}
		return true
	})
	var registered []string
	for _, k := range keys {
		registered = append(registered, k.decl().name)
	}
	assert.Equal(t, declared, registered)
	var rows []string
	for _, s := range defaultConfig().Settings() {
		rows = append(rows, s.Key)
	}
	assert.Equal(t, declared, rows)
}
