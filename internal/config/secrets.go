package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/cordonhq/cordon/internal/secrets"
)

// [secrets.NAME] tables name credentials a confined command may use but
// never read (internal/secrets): where cordon reads the value, the variable
// in which the command sees its sentinel, and the hosts the value may be
// sent to. Only the user's file and --config may hold them: a workspace
// file that adds one has it dropped with a warning. The value itself is
// read once, at start (Resolve), never written anywhere.
//
//	[secrets.github]
//	from_env = "GITHUB_TOKEN"       # or from_file = "~/.config/gh/token", or from_command = ["gh", "auth", "token"]
//	env = "GITHUB_TOKEN"            # what the sandbox sees, as a sentinel
//	hosts = ["api.github.com", "github.com"]
//	inject_body = false             # also replace the sentinel in request bodies
//	inject_url = false              # also replace it in the request's URL
//	files = ["~/.config/gh/hosts.yml"]  # files that hold the value: never readable inside, masked under bwrap

// SecretSpec is one [secrets.NAME] table.
type SecretSpec struct {
	Name        string   `json:"name"`
	FromEnv     string   `json:"from_env,omitempty"`
	FromFile    string   `json:"from_file,omitempty"`
	FromCommand []string `json:"from_command,omitempty"`
	Env         string   `json:"env,omitempty"`
	Hosts       []string `json:"hosts"`
	InjectBody  bool     `json:"inject_body,omitempty"`
	InjectURL   bool     `json:"inject_url,omitempty"`
	Files       []string `json:"files,omitempty"`
	Origin      Origin   `json:"origin"`
}

// secretKeys are the keys of a [secrets.NAME] table.
var secretKeys = []string{"env", "files", "from_command", "from_env", "from_file", "hosts", "inject_body", "inject_url"}

var secretNameRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// parseSecrets reads the [secrets] table of a file into l; problems are
// reported per key, with its line.
func (d *tomlDoc) parseSecrets(l *layer, report func(toml.Key, string, ...any)) {
	var tables map[string]toml.Primitive
	if err := d.md.PrimitiveDecode(d.top["secrets"], &tables); err != nil {
		report(toml.Key{"secrets"}, "must be a table of tables, e.g. [secrets.github] with from_env, env and hosts below it")
		return
	}
	for _, name := range sortedKeys(tables) {
		path := toml.Key{"secrets", name}
		var raw map[string]any
		if err := d.md.PrimitiveDecode(tables[name], &raw); err != nil {
			report(path, "must be a table with from_env, env and hosts, e.g. [secrets.%s]", name)
			continue
		}
		spec := SecretSpec{Name: name, Origin: Origin{File: l.path, Line: d.line(path)}}
		bad := false
		fail := func(k string, format string, args ...any) {
			bad = true
			at := path
			if k != "" {
				at = append(slices.Clone(path), k)
			}
			report(at, format, args...)
		}
		if !secretNameRe.MatchString(name) {
			fail("", "the name may hold letters, digits, '_', '.' and '-' only")
		}
		for _, k := range sortedKeys(raw) {
			v := raw[k]
			str := func() string {
				s, ok := v.(string)
				if !ok {
					fail(k, "must be a string; this is %s", typeName(v))
				}
				return s
			}
			strs := func() []string {
				list, ok := v.([]any)
				var out []string
				for _, e := range list {
					s, isStr := e.(string)
					ok = ok && isStr
					out = append(out, s)
				}
				if !ok {
					fail(k, "must be an array of strings; this is %s", typeName(v))
				}
				return out
			}
			switch k {
			case "from_env":
				spec.FromEnv = str()
			case "from_file":
				if spec.FromFile = str(); spec.FromFile != "" {
					if _, err := hostPath(spec.FromFile); err != nil {
						fail(k, "%v", err)
					}
				}
			case "from_command":
				spec.FromCommand = strs()
			case "env":
				spec.Env = str()
			case "hosts":
				spec.Hosts = strs()
			case "files":
				spec.Files = strs()
				for _, f := range spec.Files {
					if _, err := hostPath(f); err != nil {
						fail(k, "%v", err)
					}
				}
			case "inject_body", "inject_url":
				b, ok := v.(bool)
				if !ok {
					fail(k, "must be true or false; this is %s", typeName(v))
				}
				if k == "inject_body" {
					spec.InjectBody = b
				} else {
					spec.InjectURL = b
				}
			default:
				fail(k, "unknown key%s; remove it ([secrets.%s] has %s)", suggest(k, secretKeys), name, strings.Join(secretKeys, ", "))
			}
		}
		sources := 0
		for _, set := range []bool{spec.FromEnv != "", spec.FromFile != "", len(spec.FromCommand) > 0} {
			if set {
				sources++
			}
		}
		if sources != 1 && !bad {
			fail("", "name exactly one source of the value: from_env, from_file or from_command")
		}
		if spec.Env == "" && !bad {
			fail("", "env is missing: name the variable in which commands see the secret's sentinel")
		}
		if !bad {
			// The value is read at start; its checks wait for it.
			probe := secrets.Secret{Name: name, Value: []byte("placeholder"), Hosts: spec.Hosts, Env: spec.Env}
			if err := probe.Check(); err != nil {
				fail("", "%v", err)
			}
		}
		if !bad {
			l.secrets = append(l.secrets, spec)
		}
	}
}

// applySecrets takes a layer's secrets: a trusted layer's replace those
// of the same name; a workspace file's are dropped.
func (c *Config) applySecrets(l *layer, source Source) {
	for _, s := range l.secrets {
		if source == SourceWorkspace {
			c.Warnings = append(c.Warnings, Warning{File: l.path, Line: s.Origin.Line, Key: "secrets." + s.Name,
				Message: "a workspace file may not configure secrets (it would choose where a credential is sent), so this was dropped; put it in your user config if you mean it"})
			continue
		}
		s.Origin.Source = source
		c.Secrets = slices.DeleteFunc(c.Secrets, func(o SecretSpec) bool { return o.Name == s.Name })
		c.Secrets = append(c.Secrets, s)
	}
	sort.Slice(c.Secrets, func(i, j int) bool { return c.Secrets[i].Name < c.Secrets[j].Name })
}

// secretCommandTimeout bounds from_command.
const secretCommandTimeout = 30 * time.Second

// ResolveSecrets reads the value of each secret (home expands "~/"): from
// cordon's environment, a file, or a command's standard output, with one
// trailing newline removed. An empty value is an error, never a secret
// silently missing.
func ResolveSecrets(specs []SecretSpec, home string) ([]secrets.Secret, error) {
	var out []secrets.Secret
	var errs []error
	for _, s := range specs {
		v, err := s.value(home)
		if err == nil && len(v) == 0 {
			err = errors.New("the value is empty")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: secrets.%s: %w", fileLine(s.Origin.File, s.Origin.Line), s.Name, err))
			continue
		}
		sec := secrets.Secret{Name: s.Name, Value: v, Hosts: s.Hosts, Env: s.Env, InjectBody: s.InjectBody, InjectURL: s.InjectURL,
			Files: s.files(home)}
		if err := sec.Check(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", fileLine(s.Origin.File, s.Origin.Line), err))
			continue
		}
		out = append(out, sec)
	}
	return out, errors.Join(errs...)
}

// SecretFiles are the files of every secret, "~/" expanded with home:
// no confined command may read them (a sandbox with the session's secrets
// sees them masked where the backend can, see internal/secrets).
func SecretFiles(specs []SecretSpec, home string) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.files(home)...)
	}
	return out
}

// files are the secret's files and the file its value comes from, which
// holds it as surely: none may be read by a command.
func (s SecretSpec) files(home string) []string {
	var out []string
	for _, f := range s.Files {
		out = append(out, expandHome(f, home))
	}
	if s.FromFile != "" {
		if f := expandHome(s.FromFile, home); !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func expandHome(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return home + "/" + rest
	}
	return p
}

func (s SecretSpec) value(home string) ([]byte, error) {
	var v []byte
	switch {
	case s.FromEnv != "":
		val, ok := os.LookupEnv(s.FromEnv)
		if !ok {
			return nil, fmt.Errorf("from_env: cordon's environment has no %s", s.FromEnv)
		}
		v = []byte(val)
	case s.FromFile != "":
		data, err := os.ReadFile(expandHome(s.FromFile, home))
		if err != nil {
			return nil, fmt.Errorf("from_file: %w", err)
		}
		v = data
	case len(s.FromCommand) > 0:
		ctx, cancel := context.WithTimeout(context.Background(), secretCommandTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, s.FromCommand[0], s.FromCommand[1:]...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		data, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("from_command %q: %w: %s", s.FromCommand, err, strings.TrimSpace(stderr.String()))
		}
		v = data
	}
	v = bytes.TrimSuffix(v, []byte("\n"))
	return bytes.TrimSuffix(v, []byte("\r")), nil
}
