package tools

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/google/jsonschema-go/jsonschema"
)

// Schemas are generated from the Go types of a tool's arguments and
// result, so that what a client is told and what the server decodes
// cannot drift apart. jsonschema-go gives the types, the properties in
// field order, `required` (every field without omitempty) and
// additionalProperties: false; its `jsonschema:"…"` tag is a field's
// description. What it leaves out comes from cordon's `schema:"…"` tag,
// a comma-separated list of JSON Schema keywords:
//
//	TimeoutMs int `json:"timeout_ms,omitempty" jsonschema:"Kill it after this many milliseconds." schema:"minimum=1,maximum=MaxBashTimeout"`
//	Mode string   `json:"mode,omitempty" jsonschema:"The target mode." schema:"enum=workspace-write|danger-full-access"`
//
// A bound is a number or the name of one of schemaBounds, an enum a list
// of values or the name of one of schemaEnums, so that a limit
// the handler enforces is declared once, as a Go constant, and the schema
// a client is told is generated from it.

// schemaEnums are the Go constants a schema tag's enum may name, in
// their order: the values the handler accepts, declared once.
var schemaEnums = map[string][]any{
	// EscalationModes: every mode but read-only, which is never an
	// escalation target (canEscalateTo).
	"EscalationModes": {string(sandbox.WorkspaceWrite), string(sandbox.DangerFullAccess)},
	"GrepOutputs":     {grepContent, grepFiles, grepCount},
	"KillSignals":     {signalTERM, signalINT, signalKILL},
	"EntryTypes":      {entryFile, entryDir, entrySymlink, entryOther},
}

// schemaBounds are the Go constants a schema tag's minimum or maximum may
// name. A duration is in milliseconds, the unit of every *_ms argument.
var schemaBounds = map[string]float64{
	"MaxBashTimeout": float64(MaxBashTimeout.Milliseconds()),
	"MaxYield":       float64(MaxYield.Milliseconds()),
	"MaxProcessWait": float64(MaxProcessWait.Milliseconds()),
	"MaxListDepth":   MaxListDepth,
	"MaxGrepContext": MaxGrepContext,
	"MaxGrepResults": MaxGrepResults,
	// MaxInt32 is the largest count an argument takes: what every
	// client's JSON numbers and an int on any platform hold exactly.
	"MaxInt32":  math.MaxInt32,
	"-MaxInt32": -math.MaxInt32,
}

// inputSchema is the schema of a tool's arguments, In a struct.
func inputSchema(in reflect.Type) (*jsonschema.Schema, error) {
	return schemaFor(in)
}

// outputSchema is the schema of a tool's structuredContent, Out a struct,
// plus the fields of a refusal, which every tool's errors carry. It
// requires nothing and forbids nothing: an error carries only denied and
// error, and a client that checks structuredContent against the schema
// (the TypeScript SDK does) must not reject it.
func outputSchema(out reflect.Type) (*jsonschema.Schema, error) {
	s, err := schemaFor(out)
	if err != nil {
		return nil, err
	}
	refusal, err := schemaFor(reflect.TypeFor[refusalFields]())
	if err != nil {
		return nil, err
	}
	for _, name := range refusal.PropertyOrder {
		if _, ok := s.Properties[name]; !ok {
			s.PropertyOrder = append(s.PropertyOrder, name)
		}
		s.Properties[name] = refusal.Properties[name]
	}
	loosen(s)
	return s, nil
}

// refusalFields are the structuredContent of every tool's error
// (ToolError.AsResult), declared in every output schema.
type refusalFields struct {
	Denied bool `json:"denied" jsonschema:"true when the sandbox or the FS fence stopped the call"`
	Error  struct {
		Code    string `json:"code" jsonschema:"SANDBOX_UNAVAILABLE, SANDBOX_DENIED, RUNNER_FAILED, ESCALATION_NO_APPROVER, ESCALATION_DENIED, INVALID_ARGUMENT, NOT_FOUND, BINARY_FILE, TOO_LARGE or TIMEOUT"`
		Message string `json:"message" jsonschema:"what happened and what to do"`
	} `json:"error"`
}

// loosen drops required and additionalProperties from a schema and all
// the schemas within it.
func loosen(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	s.Required, s.AdditionalProperties = nil, nil
	loosen(s.Items)
	for _, p := range s.Properties {
		loosen(p)
	}
}

// schemaFor generates the schema of t and applies the schema tags.
func schemaFor(t reflect.Type) (*jsonschema.Schema, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%s is not a struct: a tool's arguments and result are JSON objects", t)
	}
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, err
	}
	if err := refine(t, s); err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	return s, nil
}

// refine walks a type beside its generated schema: it applies the schema
// tags of struct fields, gives every object its properties (an empty
// struct's too), and types every slice as an array, not as "array or
// null": a result never carries a null list (see structured). An
// optional argument whose zero value means something (process_input's
// wait_ms: 0 is "do not wait", absent is the default) is a pointer, and is
// typed as its element, not as "T or null".
func refine(t reflect.Type, s *jsonschema.Schema) error {
	if t.Kind() == reflect.Pointer {
		if len(s.Types) == 2 && s.Types[0] == "null" {
			s.Type, s.Types = s.Types[1], nil
		}
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if len(s.Types) == 2 && s.Types[0] == "null" {
			s.Type, s.Types = s.Types[1], nil
		}
		return refine(t.Elem(), s.Items)
	case reflect.Struct:
		if s.Properties == nil {
			// An object without properties still says so: some clients
			// refuse an object schema that has no "properties".
			s.Properties = map[string]*jsonschema.Schema{}
		}
		for _, f := range reflect.VisibleFields(t) {
			name, _, ok := jsonField(f)
			if !ok {
				continue
			}
			p := s.Properties[name]
			if p == nil {
				return fmt.Errorf("field %s has no schema", f.Name)
			}
			if err := applyTag(p, f.Tag.Get("schema")); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
			if err := refine(f.Type, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyTag sets the keywords of one schema tag on a property's schema.
func applyTag(p *jsonschema.Schema, tag string) error {
	if tag == "" {
		return nil
	}
	for kv := range strings.SplitSeq(tag, ",") {
		key, value, _ := strings.Cut(kv, "=")
		switch key {
		case "minimum", "maximum":
			n, ok := schemaBounds[value]
			if !ok {
				var err error
				if n, err = strconv.ParseFloat(value, 64); err != nil {
					return fmt.Errorf("schema tag %s: %q is not a number nor one of schemaBounds", key, value)
				}
			}
			if key == "minimum" {
				p.Minimum = &n
			} else {
				p.Maximum = &n
			}
		case "enum":
			if named, ok := schemaEnums[value]; ok {
				p.Enum = append(p.Enum, named...)
				continue
			}
			for v := range strings.SplitSeq(value, "|") {
				p.Enum = append(p.Enum, v)
			}
		default:
			return fmt.Errorf("schema tag: unknown keyword %q (minimum, maximum or enum)", key)
		}
	}
	return nil
}

// jsonField is a struct field's JSON name and whether it is omitted when
// empty; ok is false for fields that JSON leaves out (unexported, "-",
// and embedded structs, whose fields stand for themselves).
func jsonField(f reflect.StructField) (name string, omitEmpty, ok bool) {
	if !f.IsExported() || f.Anonymous {
		return "", false, false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	for o := range strings.SplitSeq(opts, ",") {
		if o == "omitempty" || o == "omitzero" {
			omitEmpty = true
		}
	}
	return name, omitEmpty, true
}

// structured is a tool's typed result as the map that becomes its
// structuredContent. The values keep their Go types (what the tests of
// this package compare); a field with omitempty is left out when empty,
// and a nil slice is an empty one, as the output schema says.
func structured(out any) map[string]any {
	v := reflect.ValueOf(out)
	m := map[string]any{}
	for _, f := range reflect.VisibleFields(v.Type()) {
		name, omitEmpty, ok := jsonField(f)
		if !ok {
			continue
		}
		fv := v.FieldByIndex(f.Index)
		switch {
		case omitEmpty && isEmpty(fv):
			continue
		case fv.Kind() == reflect.Slice && fv.IsNil():
			fv = reflect.MakeSlice(fv.Type(), 0, 0)
		}
		m[name] = fv.Interface()
	}
	return m
}

// isEmpty is encoding/json's idea of an empty value, for omitempty.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map, reflect.String, reflect.Array:
		return v.Len() == 0
	}
	return v.IsZero()
}
