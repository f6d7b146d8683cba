package config

import (
	"fmt"
	"strings"
)

// Flags are the values the command line gives, parsed by the keys'
// declarations: the last layer, which outranks every file in both
// directions.
type Flags struct{ layer layer }

// ParseFlags parses the flags that were given on the command line, by
// name with their argument ("--mode": "read-only"); names that set no key
// are ignored. A string flag given empty counts as not given; a boolean
// flag (--no-sandbox) counts when its argument is "true". Two flags of
// one key are an error, and so is an argument the key refuses: each error
// names the flag.
func ParseFlags(given map[string]string) (Flags, error) {
	f := Flags{layer{vals: map[key]layerValue{}}}
	for _, k := range keys {
		s := k.decl()
		var names, used []string
		for _, fl := range s.flags {
			names = append(names, fl.name)
			arg, ok := given[fl.name]
			switch {
			case !ok, fl.value == "" && arg == "", fl.value != "" && arg != "true":
				continue
			case fl.value != "":
				arg = fl.value
			}
			used = append(used, fl.name)
			v, err := k.decode(arg, fl.name+" "+strings.Trim(s.example, `"`))
			if err != nil {
				return Flags{}, fmt.Errorf("%s: %v", fl.name, err)
			}
			f.layer.vals[k] = layerValue{v: v, flag: fl.name}
		}
		if len(used) > 1 {
			return Flags{}, fmt.Errorf("%s are mutually exclusive: give one", joinAnd(names))
		}
	}
	return f, nil
}

// joinAnd is "a, b and c".
func joinAnd(list []string) string {
	if len(list) < 2 {
		return strings.Join(list, "")
	}
	return strings.Join(list[:len(list)-1], ", ") + " and " + list[len(list)-1]
}
