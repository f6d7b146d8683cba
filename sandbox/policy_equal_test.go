package sandbox

import (
	"errors"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPolicyEqualSeesEveryField: a policy that differs from another in
// any one field, found ones and inputs included, is not Equal to it. A
// field added to ExecutionPolicy or findings and left out of Equal fails
// here, so the policy cache never keeps a policy that changed.
func TestPolicyEqualSeesEveryField(t *testing.T) {
	base := func() ExecutionPolicy { return ExecutionPolicy{found: &findings{}} }
	require.True(t, base().Equal(base()))
	assert.True(t, ExecutionPolicy{}.Equal(base()), "no findings are empty findings")

	each := func(v reflect.Value, path string, change func(func(reflect.Value)) ExecutionPolicy) {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name := path + f.Name
			if name == "found" || name == "Inputs" {
				continue // walked below
			}
			p := change(func(pv reflect.Value) { setNonZero(t, pv.FieldByName(f.Name), name) })
			assert.False(t, base().Equal(p), "Equal does not see %s", name)
			assert.False(t, p.Equal(base()), "Equal does not see %s", name)
		}
	}
	each(reflect.ValueOf(ExecutionPolicy{}), "", func(set func(reflect.Value)) ExecutionPolicy {
		p := base()
		set(reflect.ValueOf(&p).Elem())
		return p
	})
	each(reflect.ValueOf(findings{}), "found.", func(set func(reflect.Value)) ExecutionPolicy {
		p := base()
		set(reflect.ValueOf(p.found).Elem())
		return p
	})
	each(reflect.ValueOf(PolicyInputs{}), "Inputs.", func(set func(reflect.Value)) ExecutionPolicy {
		p := base()
		set(reflect.ValueOf(&p.Inputs).Elem())
		return p
	})
}

// setNonZero gives v, a field reached by reflection (unexported ones
// too), a value other than its zero.
func setNonZero(t *testing.T, v reflect.Value, name string) {
	v = reflect.NewAt(v.Type(), v.Addr().UnsafePointer()).Elem()
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		if s.Index(0).Kind() == reflect.String {
			s.Index(0).SetString("x")
		} else {
			setNonZero(t, s.Index(0).Field(0), name)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.ValueOf("x"), reflect.New(v.Type().Elem()).Elem())
		v.Set(m)
	case reflect.Interface:
		v.Set(reflect.ValueOf(errors.New("x")))
	default:
		t.Fatalf("%s: a field of kind %s; teach setNonZero and Equal about it", name, v.Kind())
	}
}
