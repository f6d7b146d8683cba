// Package docs_test keeps docs/architecture.md true to the code: every
// file, package and Go name it gives exists, its import arrows are what
// `go list` reports, and its counts are computed again. It imports only
// the standard library, so it builds fast and runs nothing of cordon.
package docs_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/cordonhq/cordon"

// notGo are the backticked words of the page that are not Go names: the
// commands, arguments and values it quotes.
var notGo = map[string]bool{
	"bash": true, "bwrap": true, "serve": true, "exec": true, "wrap": true, "status": true,
	"tty": true, "openat2": true, "no_new_privs": true, "structuredContent": true,
	"read_file": true, "process_output": true, "process_input": true, "process_kill": true,
	"process_list": true, "cordon-helper": true, "sandbox-exec": true,
	"workspace-write": true, "Ready": true, "Started": true, "Exited": true,
	"--zygote": true, "--as-pid-1": true, "--rw": true, "--deny-read": true,
}

// decls are the Go names a package declares in its non-test files, for
// every GOOS: top-level names, and Type.method and Type.field.
type decls struct {
	dir    string // relative to the module root
	name   string // the package clause
	names  map[string]bool
	byFile map[string]map[string]bool // file (from the root) → names
	files  int                        // non-test .go files
}

func moduleRoot(t *testing.T) string {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return root
}

// parseModule parses every package directory of the module.
func parseModule(t *testing.T, root string) map[string]*decls {
	pkgs := map[string]*decls{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		dir := filepath.ToSlash(filepath.Dir(rel))
		if strings.HasSuffix(name, "_test.go") {
			if pkgs[dir] == nil { // a package of tests only
				pkgs[dir] = &decls{dir: dir, names: map[string]bool{}, byFile: map[string]map[string]bool{}}
			}
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		p := pkgs[dir]
		if p != nil && p.name == "" {
			p.name = f.Name.Name
		}
		if p == nil {
			p = &decls{dir: dir, name: f.Name.Name, names: map[string]bool{}, byFile: map[string]map[string]bool{}}
			pkgs[dir] = p
		}
		p.files++
		in := map[string]bool{}
		p.byFile[rel] = in
		add := func(n string) { in[n], p.names[n] = true, true }
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					add(d.Name.Name)
					continue
				}
				add(recvName(d.Recv.List[0].Type) + "." + d.Name.Name)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						add(s.Name.Name)
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fld := range st.Fields.List {
								for _, n := range fld.Names {
									add(s.Name.Name + "." + n.Name)
								}
							}
						}
						if it, ok := s.Type.(*ast.InterfaceType); ok {
							for _, m := range it.Methods.List {
								for _, n := range m.Names {
									add(s.Name.Name + "." + n.Name)
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							add(n.Name)
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// page is the document split in prose (fenced blocks blanked) and its
// fenced blocks.
type page struct {
	prose  string
	blocks []string
}

func readPage(t *testing.T) page {
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	var p page
	var prose, block strings.Builder
	in := false
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			if in {
				p.blocks = append(p.blocks, block.String())
				block.Reset()
			}
			in = !in
			prose.WriteString("\n")
			continue
		}
		if in {
			block.WriteString(line)
			prose.WriteString("\n")
		} else {
			prose.WriteString(line)
		}
	}
	p.prose = prose.String()
	return p
}

var (
	codeRE  = regexp.MustCompile("`([^`\n]+)`")
	fileRE  = regexp.MustCompile(`^[\w./-]+\.(go|md|golden|txt)$`)
	identRE = regexp.MustCompile(`^[A-Za-z_]\w*(\.[A-Za-z_]\w*){0,2}$`)
	// pairRE is a file followed by the name it declares.
	pairRE = regexp.MustCompile("`([\\w./-]+\\.go)`\\s+`([A-Za-z_][\\w.]*)`")
	pkgRE  = regexp.MustCompile(`^(cmd|internal|bench|test)/[\w-]+$`)
	// linkRE is a relative link of the page (to a file beside it or below).
	linkRE = regexp.MustCompile(`\]\(([^)#:\s]+)(?:#[^)]*)?\)`)
)

// TestArchitectureNamesExist: every file, directory, package and Go name
// the page gives in backticks exists, and a name given after its file is
// declared in that file.
func TestArchitectureNamesExist(t *testing.T) {
	root := moduleRoot(t)
	pkgs := parseModule(t, root)
	byName := map[string][]*decls{}
	all := map[string]bool{}
	for _, p := range pkgs {
		byName[p.name] = append(byName[p.name], p)
		for n := range p.names {
			all[n] = true
			if _, m, ok := strings.Cut(n, "."); ok {
				all[m] = true
			}
		}
	}
	pg := readPage(t)
	for _, m := range codeRE.FindAllStringSubmatch(pg.prose, -1) {
		tok := m[1]
		switch {
		case fileRE.MatchString(tok):
			if !strings.Contains(tok, "/") {
				t.Errorf("`%s`: name a file by its path from the repository root", tok)
			} else if _, err := os.Stat(filepath.Join(root, tok)); err != nil {
				t.Errorf("`%s` does not exist", tok)
			}
		case strings.HasSuffix(tok, "/") && strings.Count(tok, "/") > 1:
			if fi, err := os.Stat(filepath.Join(root, tok)); err != nil || !fi.IsDir() {
				t.Errorf("directory `%s` does not exist", tok)
			}
		case pkgs[tok] != nil:
		case pkgRE.MatchString(tok):
			t.Errorf("package `%s` does not exist", tok)
		case notGo[tok]:
		case identRE.MatchString(tok):
			if !declared(tok, byName, all) {
				t.Errorf("`%s` is declared nowhere in the module", tok)
			}
		}
	}
	for _, m := range linkRE.FindAllStringSubmatch(pg.prose, -1) {
		if _, err := os.Stat(filepath.FromSlash(m[1])); err != nil {
			t.Errorf("link to %s, which does not exist", m[1])
		}
	}
	for _, m := range pairRE.FindAllStringSubmatch(pg.prose, -1) {
		file, name := m[1], m[2]
		p := pkgs[filepath.ToSlash(filepath.Dir(file))]
		if p == nil || p.byFile[file] == nil {
			continue // reported above, or not Go of the module
		}
		if !p.byFile[file][name] {
			t.Errorf("`%s` does not declare `%s`", file, name)
		}
	}
}

// declared reports whether tok names something of the module: pkg.Name
// (pkg a package clause), Type.member, or a name.
func declared(tok string, byName map[string][]*decls, all map[string]bool) bool {
	if first, rest, ok := strings.Cut(tok, "."); ok {
		if ps := byName[first]; ps != nil {
			for _, p := range ps {
				if p.names[rest] {
					return true
				}
			}
			return false
		}
	}
	return all[tok]
}

// arrows parses the fenced block of the import arrows: "pkg → a, b [goos]".
func arrows(t *testing.T, pg page) (order []string, imports map[string][]string) {
	imports = map[string][]string{}
	for _, b := range pg.blocks {
		if !strings.Contains(b, "→") {
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(b), "\n") {
			from, to, ok := strings.Cut(line, "→")
			if !ok {
				t.Fatalf("arrow line without an arrow: %q", line)
			}
			from = strings.TrimSpace(from)
			order = append(order, from)
			imports[from] = []string{}
			for _, imp := range strings.Split(to, ",") {
				if imp = strings.TrimSpace(imp); imp != "" {
					imports[from] = append(imports[from], imp)
				}
			}
		}
		return order, imports
	}
	t.Fatal("no block of import arrows")
	return nil, nil
}

// goList is each package's imports of the module on goos, not counting
// tests.
func goList(t *testing.T, root, goos string) map[string][]string {
	listedMu.Lock()
	defer listedMu.Unlock()
	if got, ok := listed[goos]; ok {
		return got
	}
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS="+goos)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list for %s: %v", goos, err)
	}
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		from := strings.TrimPrefix(f[0], module+"/")
		got[from] = []string{}
		for _, imp := range f[1:] {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				got[from] = append(got[from], rel)
			}
		}
		slices.Sort(got[from])
	}
	listed[goos] = got
	return got
}

// listed memoizes goList: each GOOS is listed once per test binary.
var (
	listedMu sync.Mutex
	listed   = map[string]map[string][]string{}
)

var goosTag = regexp.MustCompile(`^(\S+) \[(\w+)\]$`)

// TestArchitectureArrows: the arrows are the imports `go list` reports on
// linux, darwin and windows, every package is there, each imports only
// packages listed below it, and the package table lists the same set.
func TestArchitectureArrows(t *testing.T) {
	root := moduleRoot(t)
	pg := readPage(t)
	order, stated := arrows(t, pg)
	union := map[string]bool{}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		got := goList(t, root, goos)
		for pkg, imps := range got {
			union[pkg] = true
			want, ok := stated[pkg]
			if !ok {
				t.Errorf("package %s has no arrow line", pkg)
				continue
			}
			var onGOOS []string
			for _, w := range want {
				if m := goosTag.FindStringSubmatch(w); m != nil {
					if m[2] == goos {
						onGOOS = append(onGOOS, m[1])
					}
					continue
				}
				onGOOS = append(onGOOS, w)
			}
			slices.Sort(onGOOS)
			if !slices.Equal(onGOOS, imps) {
				t.Errorf("%s on %s imports %v; the page says %v", pkg, goos, imps, onGOOS)
			}
		}
	}
	for i, pkg := range order {
		if !union[pkg] {
			t.Errorf("arrow line for %s, which is no package", pkg)
		}
		for _, imp := range stated[pkg] {
			imp = strings.Fields(imp)[0]
			if j := slices.Index(order, imp); j <= i {
				t.Errorf("%s imports %s, which is not listed below it", pkg, imp)
			}
		}
	}
	table := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([\\w/-]+)` \\|").FindAllStringSubmatch(pg.prose, -1) {
		table[m[1]] = true
	}
	for pkg := range union {
		if !table[pkg] {
			t.Errorf("package %s is missing from the package table", pkg)
		}
	}
	for pkg := range table {
		if !union[pkg] {
			t.Errorf("the package table lists %s, which is no package", pkg)
		}
	}
}

// claims are the counts the page states, each with how to compute it.
var claims = []struct {
	re      *regexp.Regexp
	compute func(t *testing.T, root string, pkgs map[string]*decls) []int
}{
	{regexp.MustCompile(`The module has (\d+) packages`), func(t *testing.T, root string, _ map[string]*decls) []int {
		union := map[string]bool{}
		for _, goos := range []string{"linux", "darwin", "windows"} {
			for pkg := range goList(t, root, goos) {
				union[pkg] = true
			}
		}
		return []int{len(union)}
	}},
	{regexp.MustCompile("`sandbox` is the largest: (\\d+) non-test Go files"), func(t *testing.T, _ string, pkgs map[string]*decls) []int {
		for dir, p := range pkgs {
			if p.files > pkgs["sandbox"].files {
				t.Errorf("%s has more non-test Go files (%d) than sandbox", dir, p.files)
			}
		}
		return []int{pkgs["sandbox"].files}
	}},
	{regexp.MustCompile(`The steps above name (\d+) non-test Go files in (\d+) packages`), func(t *testing.T, _ string, _ map[string]*decls) []int {
		files, dirs := map[string]bool{}, map[string]bool{}
		for _, m := range regexp.MustCompile("`([\\w./-]+\\.go)`").FindAllStringSubmatch(section(t, readPage(t).prose, "## One warm `bash` call"), -1) {
			if !strings.HasSuffix(m[1], "_test.go") {
				files[m[1]], dirs[filepath.Dir(m[1])] = true, true
			}
		}
		return []int{len(files), len(dirs)}
	}},
}

// section is the text under heading, up to the next heading of its level.
func section(t *testing.T, prose, heading string) string {
	_, rest, ok := strings.Cut(prose, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("no section %q", heading)
	}
	body, _, _ := strings.Cut(rest, "\n## ")
	return body
}

var countRE = regexp.MustCompile(`\b\d+\s+(?:[\w-]+\s+){0,3}(?:files|packages|names|lines)\b`)

// TestArchitectureCounts: each count the page states is computed again,
// and the page states no count that is not.
func TestArchitectureCounts(t *testing.T) {
	root := moduleRoot(t)
	pkgs := parseModule(t, root)
	pg := readPage(t)
	covered := map[int]bool{}
	for _, c := range claims {
		locs := c.re.FindAllStringSubmatchIndex(pg.prose, -1)
		if len(locs) != 1 {
			t.Errorf("%q: found %d times, want once", c.re, len(locs))
			continue
		}
		var stated []int
		for g := 2; g < len(locs[0]); g += 2 {
			n, _ := strconv.Atoi(pg.prose[locs[0][g]:locs[0][g+1]])
			stated = append(stated, n)
			covered[locs[0][g]] = true
		}
		if got := c.compute(t, root, pkgs); !slices.Equal(got, stated) {
			t.Errorf("%q: the page says %v, it is %v", c.re, stated, got)
		}
	}
	for _, loc := range countRE.FindAllStringIndex(pg.prose, -1) {
		if !covered[loc[0]] {
			t.Errorf("%q: a count no test computes (add it to claims)", fmt.Sprint(pg.prose[loc[0]:loc[1]]))
		}
	}
}
