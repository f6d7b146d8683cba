package tools

import (
	"reflect"
	"testing"

	"github.com/cordonhq/cordon/fsfence"
)

// TestFenceKeyIsExact: configs that differ only in where one list ends
// and the next begins, or in an entry's bytes, never share a key.
func TestFenceKeyIsExact(t *testing.T) {
	cfgs := []fsfence.Config{
		{WritableRoots: []string{"/a"}, Protected: []string{"/b"}},
		{WritableRoots: []string{"/a", "/b"}},
		{WritableRoots: []string{"/a;1:/b"}},
		{Protected: []string{"/a", "/b"}},
		{WritableRoots: []string{"/a"}, ProtectedNames: []string{"\x01b"}},
		{WritableRoots: []string{"/a"}, ReadDeny: []string{"\x01b"}},
		{},
	}
	seen := map[string]int{}
	for i, c := range cfgs {
		k := fenceKey(c)
		if j, ok := seen[k]; ok {
			t.Errorf("configs %d and %d share the key %q", j, i, k)
		}
		seen[k] = i
	}
}

// TestFenceKeyCoversTheConfig: the key names every field of
// fsfence.Config; a new field must be added to fenceKey (and here).
func TestFenceKeyCoversTheConfig(t *testing.T) {
	if n := reflect.TypeFor[fsfence.Config]().NumField(); n != 5 {
		t.Fatalf("fsfence.Config has %d fields, fenceKey names 5: add the new one to the key", n)
	}
}
