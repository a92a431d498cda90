package hub

import (
	"reflect"
	"strconv"
	"testing"
	"time"
)

// TestDefaultTagsMatchWithDefaults: the default a configuration file shows
// for a client option (its default tag) is what the hub applies for zero,
// so a file that writes the default and one that leaves it out agree.
func TestDefaultTagsMatchWithDefaults(t *testing.T) {
	got := reflect.ValueOf(ClientConfig{}.withDefaults())
	typ := got.Type()
	checked := 0
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		def, ok := f.Tag.Lookup("default")
		if !ok {
			continue
		}
		var want any
		switch f.Type {
		case reflect.TypeOf(time.Duration(0)):
			d, err := time.ParseDuration(def)
			if err != nil {
				t.Fatalf("%s: default %q: %v", f.Name, def, err)
			}
			want = d
		case reflect.TypeOf(0):
			n, err := strconv.Atoi(def)
			if err != nil {
				t.Fatalf("%s: default %q: %v", f.Name, def, err)
			}
			want = n
		default:
			t.Fatalf("%s: the test does not know type %s", f.Name, f.Type)
		}
		if v := got.Field(i).Interface(); v != want {
			t.Errorf("%s: withDefaults gives %v, the default tag says %v", f.Name, v, want)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no default tags found")
	}
}
