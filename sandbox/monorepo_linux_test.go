package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// monorepoTools are the real build tools the monorepo test drives, found
// on the host: the absolute paths, so that the confined command, whose
// HOME is its session tmp, runs the same ones (rustup's and pyenv's
// shims look in HOME).
type monorepoTools struct {
	goBin, npm, node, python, cargo, rustc string
	missing                                []string
}

func findMonorepoTools(t *testing.T) monorepoTools {
	var m monorepoTools
	look := func(name string) string {
		p, err := exec.LookPath(name)
		if err != nil {
			m.missing = append(m.missing, name)
		}
		return p
	}
	m.goBin, m.npm, m.node = look("go"), look("npm"), look("node")
	// The interpreter itself, not a shim; with venv and pip working.
	if out, err := exec.Command("python3", "-c", "import sys, venv, pip; print(sys.executable)").Output(); err == nil {
		m.python = strings.TrimSpace(string(out))
	} else {
		m.missing = append(m.missing, "python3 with venv and pip")
	}
	// The toolchain itself, not rustup's proxy: the sysroot's cargo and
	// rustc (rustup's toolchain, or /usr for a distribution's cargo).
	if out, err := exec.Command("rustc", "--print", "sysroot").Output(); err == nil {
		root := strings.TrimSpace(string(out))
		m.cargo, m.rustc = filepath.Join(root, "bin", "cargo"), filepath.Join(root, "bin", "rustc")
		if _, err := os.Stat(m.cargo); err != nil {
			m.cargo = look("cargo")
		}
	} else {
		m.missing = append(m.missing, "rustc and cargo")
	}
	return m
}

// TestMonorepoWorkBesideNestedConfigs: nested pkg/.vscode/ and
// pkg/.claude/ directories (and the same beside each package) cost
// ordinary work nothing in workspace-write: the real go build, npm
// install (a package packed by npm pack, which ships its own .vscode into
// node_modules), pip install -e . into a virtual environment in the
// workspace, cargo build, and git commit all work, offline, and nothing
// is reported undone; the human's configurations are as they were.
func TestMonorepoWorkBesideNestedConfigs(t *testing.T) {
	tools := findMonorepoTools(t)
	if len(tools.missing) > 0 {
		testenv.SkipUnlessCI(t, "missing "+strings.Join(tools.missing, ", "))
	}
	backend, err := os.ReadFile(filepath.Join("testdata", "monorepo", "backend.py"))
	require.NoError(t, err)
	// One build cache for both backends, writable like the workspace: a
	// cold one makes each build of the runtime take most of a minute.
	goCache := t.TempDir()
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		for rel, content := range map[string]string{
			".gitignore":                            "node_modules/\n.venv/\ntarget/\n*.tgz\n",
			"go.mod":                                "module example.com/mono\n\ngo 1.21\n",
			"pkg/main.go":                           "package main\n\nfunc main() { println(\"v1\") }\n",
			"pkg/.vscode/settings.json":             `{"editor.tabSize": 4}`,
			"pkg/.claude/settings.json":             `{"permissions":{}}`,
			"web/package.json":                      `{"name":"web","version":"1.0.0","private":true}`,
			"web/index.js":                          "console.log(require('left'))\n",
			"web/.vscode/launch.json":               `{}`,
			"vendor-src/left/package.json":          `{"name":"left","version":"1.0.0","main":"index.js"}`,
			"vendor-src/left/index.js":              "module.exports = 'npm-ok'\n",
			"vendor-src/left/.vscode/settings.json": `{}`,
			"py/pyproject.toml":                     "[build-system]\nrequires = []\nbuild-backend = \"backend\"\nbackend-path = [\".\"]\n\n[project]\nname = \"hello\"\nversion = \"1.0\"\n",
			"py/backend.py":                         string(backend),
			"py/hello.py":                           "MSG = 'py-ok'\n",
			"py/.vscode/settings.json":              `{}`,
			"rs/Cargo.toml":                         "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
			"rs/src/main.rs":                        "fn main() { println!(\"rs-ok\"); }\n",
			"rs/.claude/settings.json":              `{"permissions":{}}`,
		} {
			p := filepath.Join(f.ws, filepath.FromSlash(rel))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		}
		testenv.Git(t, f.ws, "init", "-q")
		testenv.Git(t, f.ws, "add", "-A")
		testenv.Git(t, f.ws, "commit", "-q", "-m", "first")
		configs := map[string]string{}
		for _, rel := range []string{"pkg/.vscode/settings.json", "pkg/.claude/settings.json", "web/.vscode/launch.json", "py/.vscode/settings.json", "rs/.claude/settings.json"} {
			b, err := os.ReadFile(filepath.Join(f.ws, rel))
			require.NoError(t, err)
			configs[rel] = string(b)
		}
		svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Network: NetworkAllow, Workspace: f.ws, Home: f.home,
			StateDir: f.state, ConfigDir: filepath.Join(f.home, ".config", "cordon"), ExtraWriteAllow: []string{goCache}}}
		p, err := svc.Resolve(Request{TmpDir: f.tmp, SessionID: "test"})
		require.NoError(t, err)
		script := `set -e
export GOCACHE="$GOCACHE_DIR" GOPATH="$TMPDIR/gopath" GOTOOLCHAIN=local GOFLAGS=-mod=mod HOME="$TMPDIR"
export PIP_DISABLE_PIP_VERSION_CHECK=1 CARGO_HOME="$TMPDIR/cargo-home" RUSTC="$RUSTC_BIN" PATH="$(dirname "$NODE_BIN"):$PATH"
"$GO_BIN" build -o "$TMPDIR/app" ./pkg
"$TMPDIR/app"
sed -i 's/v1/v2/' pkg/main.go
"$GO_BIN" build -o "$TMPDIR/app" ./pkg
"$TMPDIR/app"
(cd vendor-src/left && "$NPM_BIN" pack --offline --silent --pack-destination ../../web)
(cd web && "$NPM_BIN" install --offline --no-audit --no-fund ./left-1.0.0.tgz && "$NODE_BIN" index.js)
"$PYTHON_BIN" -m venv --without-pip .venv
(cd py && "$PYTHON_BIN" -m pip --python ../.venv/bin/python install -q --no-build-isolation --no-deps --no-index -e .)
.venv/bin/python -c 'import hello; print(hello.MSG)'
sed -i 's/py-ok/py-edited/' py/hello.py
.venv/bin/python -c 'import hello; print(hello.MSG)'
"$CARGO_BIN" build --offline --quiet --manifest-path rs/Cargo.toml
rs/target/debug/hello
git -c user.name=t -c user.email=t@example.com add -A
git -c user.name=t -c user.email=t@example.com commit -q -m 'v2'
git log --oneline | wc -l
`
		env := []string{"GOCACHE_DIR=" + goCache, "GO_BIN=" + tools.goBin, "NPM_BIN=" + tools.npm, "NODE_BIN=" + tools.node,
			"PYTHON_BIN=" + tools.python, "CARGO_BIN=" + tools.cargo, "RUSTC_BIN=" + tools.rustc}
		out, o := f.launch(p, append([]string{"/usr/bin/env"}, append(env, "/bin/sh", "-c", script)...)...)
		require.Equal(t, 0, o.ExitCode, out)
		assert.Empty(t, o.Undone, "ordinary work was undone")
		for _, want := range []string{"v1", "v2", "npm-ok", "py-ok", "py-edited", "rs-ok"} {
			assert.Contains(t, out, want)
		}
		assert.FileExists(t, filepath.Join(f.ws, "web", "package-lock.json"))
		assert.FileExists(t, filepath.Join(f.ws, "web", "node_modules", "left", ".vscode", "settings.json"), "node_modules is not searched")
		assert.FileExists(t, filepath.Join(f.ws, "rs", "Cargo.lock"))
		log := testenv.Git(t, f.ws, "show", "--stat", "--format=%s", "HEAD")
		assert.Contains(t, log, "v2", "the commit is on the host")
		assert.Contains(t, log, "pkg/main.go")
		for rel, want := range configs {
			b, err := os.ReadFile(filepath.Join(f.ws, rel))
			require.NoError(t, err)
			assert.Equal(t, want, string(b), rel)
		}
	})
}
