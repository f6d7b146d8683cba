// Command exportcount counts, per package directory, the exported names a
// package declares in its non-test files: top-level funcs, types, vars and
// consts, and exported methods on exported types. A name declared in
// several platform files (foo_linux.go, foo_other.go) counts once.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	root := os.Args[1]
	names := map[string]map[string]bool{} // dir -> kind:name
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() && (fi.Name() == "testdata" || strings.HasPrefix(fi.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if fi.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		dir, _ := filepath.Rel(root, filepath.Dir(p))
		set := names[dir]
		if set == nil {
			set = map[string]bool{}
			names[dir] = set
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					set["func "+d.Name.Name] = true
					continue
				}
				t := d.Recv.List[0].Type
				for {
					switch x := t.(type) {
					case *ast.StarExpr:
						t = x.X
						continue
					case *ast.IndexExpr:
						t = x.X
						continue
					case *ast.IndexListExpr:
						t = x.X
						continue
					}
					break
				}
				if id, ok := t.(*ast.Ident); ok && id.IsExported() {
					set["method "+id.Name+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							set["type "+s.Name.Name] = true
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								set[d.Tok.String()+" "+n.Name] = true
							}
						}
					}
				}
			}
		}
		return nil
	})
	dirs := make([]string, 0, len(names))
	for d := range names {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	verbose := len(os.Args) > 2
	total := 0
	for _, d := range dirs {
		kinds := map[string]int{}
		var list []string
		for n := range names[d] {
			kinds[strings.SplitN(n, " ", 2)[0]]++
			list = append(list, n)
		}
		sort.Strings(list)
		total += len(list)
		fmt.Printf("%-18s %4d  (func %d, type %d, method %d, var %d, const %d)\n", d, len(list), kinds["func"], kinds["type"], kinds["method"], kinds["var"], kinds["const"])
		if verbose {
			for _, n := range list {
				fmt.Println("    " + n)
			}
		}
	}
	fmt.Printf("%-18s %4d\n", "total", total)
}
