package api

import (
	"reflect"
	"strconv"
	"testing"
	"time"
)

// TestConfigDefaultTags: the default tags, which the configuration file
// and its docs take, are the defaults the handler applies to zero fields.
func TestConfigDefaultTags(t *testing.T) {
	cfg, err := Config{Insecure: true}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(cfg)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		tag, ok := f.Tag.Lookup("default")
		if !ok {
			continue
		}
		var want int64
		if f.Type == reflect.TypeFor[time.Duration]() {
			d, err := time.ParseDuration(tag)
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			want = int64(d)
		} else if want, err = strconv.ParseInt(tag, 10, 64); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if got := v.Field(i).Int(); got != want {
			t.Errorf("%s: default tag %s, the handler applies %d", f.Name, tag, got)
		}
	}
}
