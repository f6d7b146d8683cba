package main

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// wrapName is the class directory's default name: the package a runner
// (npx, uvx, `python -m`) starts, or the script an interpreter runs, else
// the command's base name, made safe as one path element. It is never the
// interpreter's own name when a script follows it: `node a.js` and `node
// b.js` must not share caches, data and, for an agent, a config home.
func wrapName(argv []string) string {
	args := argv
	if len(args) > 0 && filepath.Base(args[0]) == "env" {
		args = args[1:] // env -i FOO=1 node a.js
		for len(args) > 0 && (strings.HasPrefix(args[0], "-") || strings.Contains(args[0], "=")) {
			args = args[1:]
		}
	}
	if len(args) == 0 {
		return "program"
	}
	name := safeName(commandName(args))
	if name == "" {
		return "program"
	}
	return name
}

// commandName is wrapName before it is made safe.
func commandName(args []string) string {
	cmd := filepath.Base(args[0])
	rest := args[1:]
	switch lang := interpreterOf(cmd); lang {
	case "npx":
		if pkg := firstOperand(rest, "-p", "--package", "-c", "--call"); pkg != "" {
			return packageName(pkg)
		}
	case "uvx":
		if pkg := firstOperand(rest, "--from", "--with", "--with-editable", "--with-requirements", "-p", "--python", "--index", "--index-url", "--extra-index-url"); pkg != "" {
			return packageName(pkg)
		}
	case "runner":
		// npm exec PKG, pnpm dlx PKG, uv tool run PKG, uv run SCRIPT, bun run SCRIPT, deno run SCRIPT
		for len(rest) > 0 && (rest[0] == "exec" || rest[0] == "dlx" || rest[0] == "x" || rest[0] == "tool" || rest[0] == "run") {
			rest = rest[1:]
		}
		if op := firstOperand(rest, "-p", "--package", "--from", "--with", "-A"); op != "" {
			return scriptOrPackage(op)
		}
	case "python":
		for i := 0; i < len(rest); i++ {
			a := rest[i]
			switch {
			case a == "-m" && i+1 < len(rest):
				return rest[i+1]
			case strings.HasPrefix(a, "-m") && len(a) > 2:
				return a[2:]
			case a == "-c":
				return cmd + "-" + argvHash(args)
			case a == "-W" || a == "-X" || a == "--check-hash-based-pycs":
				i++
			case !strings.HasPrefix(a, "-"):
				return scriptOrPackage(a)
			}
		}
	case "script":
		valued := []string{"-r", "--require", "--import", "--loader", "--experimental-loader", "--input-type", "--env-file",
			"-I", "-M", "-x", "-o", "--config", "-c", "-e", "--eval", "-p", "--print"}
		for i := 0; i < len(rest); i++ {
			a := rest[i]
			switch {
			case a == "-e" || a == "--eval" || a == "-p" || a == "--print" || (a == "-c" && isShell(cmd)):
				return cmd + "-" + argvHash(args)
			case a == "--":
			case strings.HasPrefix(a, "-"):
				if !strings.Contains(a, "=") && slices.Contains(valued, a) {
					i++
				}
			case a == "run" && (cmd == "deno" || cmd == "bun"):
			default:
				return scriptOrPackage(a)
			}
		}
	case "java":
		for i, a := range rest {
			if a == "-jar" && i+1 < len(rest) {
				return scriptOrPackage(rest[i+1])
			}
		}
	default:
		return cmd
	}
	// An interpreter with no script or package named: its argv tells two
	// such programs apart.
	return cmd + "-" + argvHash(args)
}

// interpreterOf says how cmd names the program it runs.
func interpreterOf(cmd string) string {
	switch {
	case cmd == "npx" || cmd == "bunx" || cmd == "pnpx":
		return "npx"
	case cmd == "uvx" || cmd == "pipx":
		return "uvx"
	case cmd == "npm" || cmd == "pnpm" || cmd == "yarn" || cmd == "uv":
		return "runner"
	case pythonName.MatchString(cmd):
		return "python"
	case cmd == "java":
		return "java"
	case isShell(cmd), scriptInterpreter.MatchString(cmd):
		return "script"
	}
	return ""
}

var (
	pythonName        = regexp.MustCompile(`^(python|pypy)[0-9.]*$`)
	scriptInterpreter = regexp.MustCompile(`^(node|nodejs|deno|bun|tsx|ts-node|ruby|perl|php|Rscript|lua[0-9.]*|osascript)$`)
)

func isShell(cmd string) bool {
	switch cmd {
	case "sh", "bash", "dash", "zsh", "ksh", "fish":
		return true
	}
	return false
}

// firstOperand is the first argument that is not a flag, skipping the
// values of the flags named in valued.
func firstOperand(args []string, valued ...string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
		case strings.HasPrefix(a, "-"):
			if !strings.Contains(a, "=") && slices.Contains(valued, a) {
				i++
			}
		default:
			return a
		}
	}
	return ""
}

// packageName drops a version: @scope/pkg@1.2.3, pkg==1.0, pkg[extra].
func packageName(pkg string) string {
	if at := strings.LastIndex(pkg, "@"); at > 0 {
		pkg = pkg[:at]
	}
	if i := strings.IndexAny(pkg, "=<>[~!"); i > 0 {
		pkg = pkg[:i]
	}
	return pkg
}

// genericStems are script names that say nothing of the program: its
// directory does.
var genericStems = []string{"index", "main", "server", "cli", "app", "__main__", "run", "start", "mod"}

// buildDirs are directories a script sits in that say nothing either.
var buildDirs = []string{"dist", "build", "lib", "src", "bin", "out", "."}

// scriptOrPackage names a script path by its file name without extension
// (by its directory when that name is generic), and a package by itself.
func scriptOrPackage(op string) string {
	if strings.HasPrefix(op, "@") || !strings.ContainsAny(op, `/\`) && filepath.Ext(op) == "" {
		return packageName(op)
	}
	base := filepath.Base(op)
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	if !slices.Contains(genericStems, stem) {
		return stem
	}
	abs, err := filepath.Abs(op)
	if err != nil {
		return stem
	}
	for dir := filepath.Dir(abs); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if d := filepath.Base(dir); !slices.Contains(buildDirs, d) {
			return d + "-" + stem
		}
	}
	return stem
}

// argvHash is a short digest of argv, for a program that only its whole
// command line names.
func argvHash(argv []string) string {
	sum := sha256.Sum256([]byte(strings.Join(argv, "\x00")))
	return hex.EncodeToString(sum[:4])
}

func safeName(name string) string {
	return strings.Trim(unsafeName.ReplaceAllString(name, "-"), "-.")
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
