package packaging

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// registrySchema compiles the MCP Registry's published server.json schema,
// vendored in mcp-registry/ (its URL and date in the README there), with
// formats asserted as the registry does.
func registrySchema(t *testing.T) (*jsonschema.Schema, string) {
	t.Helper()
	f, err := os.Open(filepath.Join("mcp-registry", "server.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("server.schema.json: %v", err)
	}
	id, _ := doc.(map[string]any)["$id"].(string)
	if !strings.HasPrefix(id, "https://static.modelcontextprotocol.io/schemas/") {
		t.Fatalf("server.schema.json has $id %q, not the registry's published URL", id)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile(id)
	if err != nil {
		t.Fatalf("compiling the registry schema: %v", err)
	}
	return schema, id
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// TestServerJSONMatchesRegistrySchema validates the committed server.json
// and, when CORDON_SERVER_JSON names it (make test-server-json), the one a
// release build wrote, against the registry's schema and the rules the
// official registry adds: the npm package it names must carry the same
// name in its mcpName, and the versions must agree.
func TestServerJSONMatchesRegistrySchema(t *testing.T) {
	schema, id := registrySchema(t)
	paths := []string{filepath.Join("mcp-registry", "server.json")}
	if built := os.Getenv("CORDON_SERVER_JSON"); built != "" {
		paths = append(paths, built)
	} else {
		t.Log("CORDON_SERVER_JSON unset: checking the committed server.json only (make test-server-json checks a release's)")
	}
	wrapper := readJSON(t, filepath.Join("npm", "cordon", "package.json"))
	for _, path := range paths {
		server := readJSON(t, path)
		if err := schema.Validate(server); err != nil {
			t.Errorf("%s does not match the registry schema:\n%v", path, err)
			continue
		}
		if server["$schema"] != id {
			t.Errorf("%s: $schema is %v, want the vendored schema's %s", path, server["$schema"], id)
		}
		if server["name"] != wrapper["mcpName"] {
			t.Errorf("%s: name %v, but the npm package's mcpName is %v: the registry would refuse it", path, server["name"], wrapper["mcpName"])
		}
		npm := 0
		for _, p := range server["packages"].([]any) {
			pkg := p.(map[string]any)
			if pkg["version"] != nil && pkg["version"] != server["version"] {
				t.Errorf("%s: package %v has version %v, the server %v", path, pkg["identifier"], pkg["version"], server["version"])
			}
			switch pkg["registryType"] {
			case "npm":
				npm++
				if pkg["identifier"] != wrapper["name"] {
					t.Errorf("%s: npm package %v, but packaging/npm builds %v", path, pkg["identifier"], wrapper["name"])
				}
			case "mcpb":
				if pkg["fileSha256"] == nil {
					t.Errorf("%s: mcpb package %v has no fileSha256", path, pkg["identifier"])
				}
			}
		}
		if npm != 1 {
			t.Errorf("%s: %d npm packages, want 1", path, npm)
		}
	}
}

// TestRegistrySchemaRejectsBrokenServerJSON proves the check can fail:
// each broken copy of server.json must not validate.
func TestRegistrySchemaRejectsBrokenServerJSON(t *testing.T) {
	schema, _ := registrySchema(t)
	breaks := map[string]func(s map[string]any){
		"no name":              func(s map[string]any) { delete(s, "name") },
		"name without slash":   func(s map[string]any) { s["name"] = "cordon" },
		"description too long": func(s map[string]any) { s["description"] = strings.Repeat("x", 101) },
		"no version":           func(s map[string]any) { delete(s, "version") },
		"package version latest": func(s map[string]any) {
			s["packages"].([]any)[0].(map[string]any)["version"] = "latest"
		},
		"package without transport": func(s map[string]any) {
			delete(s["packages"].([]any)[0].(map[string]any), "transport")
		},
		"repository url not a URI": func(s map[string]any) {
			s["repository"].(map[string]any)["url"] = "not a url"
		},
	}
	for name, breakIt := range breaks {
		t.Run(name, func(t *testing.T) {
			server := readJSON(t, filepath.Join("mcp-registry", "server.json"))
			breakIt(server)
			if err := schema.Validate(server); err == nil {
				t.Errorf("a server.json with %s validates", name)
			}
		})
	}
}
