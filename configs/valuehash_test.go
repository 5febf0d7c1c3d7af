package configs

import (
	"reflect"
	"strings"
	"testing"
)

// leaves calls fn with every scalar field (through structs, slices and
// maps) of v that the YAML carries, by its path.
func leaves(v reflect.Value, path string, fn func(path string, v reflect.Value)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			leaves(v.Elem(), path, fn)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); f.IsExported() && name != "-" {
				leaves(v.Field(i), path+"."+f.Name, fn)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			leaves(v.Index(i), path+"[]", fn)
		}
	default: // scalars, and maps (whose values cannot be set in place)
		fn(path, v)
	}
}

// The value hash of every built-in config can be made (no field of a
// kind it cannot write), is the same for the same values, and changes
// with any one scalar field the YAML carries: the simulation cache's
// config key tells every pair of configs apart that Hash does.
func TestValueHashSeesEveryField(t *testing.T) {
	for _, name := range Builtin() {
		ld, err := Load([]string{name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := *ld.Config
		base := valueHash(&c)
		again, _ := Load([]string{name}, nil)
		if valueHash(again.Config) != base {
			t.Fatalf("%s: two loads hash differently", name)
		}
		n := 0
		leaves(reflect.ValueOf(&c).Elem(), "", func(path string, v reflect.Value) {
			if !v.CanSet() || v.Kind() == reflect.Map {
				return
			}
			old := reflect.New(v.Type()).Elem()
			old.Set(v)
			switch v.Kind() {
			case reflect.Int, reflect.Int64:
				v.SetInt(v.Int() + 1)
			case reflect.Float64:
				v.SetFloat(v.Float()*2 + 1)
			case reflect.String:
				v.SetString(v.String() + "x")
			case reflect.Bool:
				v.SetBool(!v.Bool())
			default:
				return
			}
			n++
			if valueHash(&c) == base {
				t.Errorf("%s: %s changed, the hash did not", name, path)
			}
			v.Set(old)
		})
		if valueHash(&c) != base || n < 100 {
			t.Errorf("%s: %d fields changed; the hash after restoring them differs: %v", name, n, valueHash(&c) != base)
		}
	}
}
