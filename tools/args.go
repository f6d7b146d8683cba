package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// decodeArgs fills in (a pointer to a tool's argument struct) from the
// call's arguments, strictly: unknown arguments, wrong types and missing
// required ones (those the tool's input schema requires) are errors that
// name the argument.
func decodeArgs(args map[string]any, in any, required []string) error {
	for _, r := range required {
		if _, ok := args[r]; !ok {
			return fmt.Errorf("missing required argument %q", r)
		}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("arguments are not JSON: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// The field's path names the embedded structs it passes
			// through (Escalation.sandbox_permissions); the client
			// sent the last name only.
			field := te.Field[strings.LastIndexByte(te.Field, '.')+1:]
			return fmt.Errorf("argument %q must be %s, not %s", field, jsonType(te.Type.Kind().String()), te.Value)
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return fmt.Errorf("unknown argument %s", name)
		}
		return fmt.Errorf("invalid arguments: %v", err)
	}
	return nil
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int64", "int32":
		return "an integer"
	case "float64":
		return "a number"
	}
	return kind
}
