package tools_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/tools"
)

// TestToolNames fails when a tool of the table has no Name constant in
// names.go, or a constant names no tool: every name is declared once.
func TestToolNames(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "names.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]string{} // value → constant
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if !strings.HasPrefix(id.Name, "Name") {
					continue
				}
				v := constValue(t, id.Name, vs.Values[i])
				if other, dup := declared[v]; dup {
					t.Errorf("%s and %s both name %q", other, id.Name, v)
				}
				declared[v] = id.Name
			}
		}
	}
	var inTable []string
	for _, tool := range tools.Tools() {
		inTable = append(inTable, tool.Name)
		if _, ok := declared[tool.Name]; !ok {
			t.Errorf("tool %q has no Name constant in names.go", tool.Name)
		}
	}
	for v, name := range declared {
		if !slices.Contains(inTable, v) {
			t.Errorf("%s = %q names no tool of the table", name, v)
		}
	}
	if tools.NameBash != "bash" || tools.NameReadFile != "read_file" {
		t.Errorf("the constants are not the names clients call: %q, %q", tools.NameBash, tools.NameReadFile)
	}
}

// constValue is the string a Name constant declares: a literal, or
// approval.ShellTool.
func constValue(t *testing.T, name string, e ast.Expr) string {
	switch e := e.(type) {
	case *ast.BasicLit:
		v, err := strconv.Unquote(e.Value)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok && x.Name == "approval" && e.Sel.Name == "ShellTool" {
			return approval.ShellTool
		}
	}
	t.Fatalf("%s: a Name constant is a string literal or approval.ShellTool", name)
	return ""
}
