package enginetest

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine"
)

// CheckKind checks that what kind declares matches its engine type, of
// which e is a value (a nil pointer will do): Caps.Maps if and only if
// engine.MapsOf finds map state in it, and Caps.Store if and only if
// engine.StoreOf finds a store, since configuration checks trust the
// declaration and the hub the engine.
func CheckKind(t *testing.T, kind engine.Kind, e engine.Engine) {
	t.Helper()
	if _, maps := engine.MapsOf(e); maps != kind.Caps.Maps {
		t.Errorf("kind %q declares Maps %v, but engine.MapsOf(%T) finds map state: %v", kind.Name, kind.Caps.Maps, e, maps)
	}
	if _, store := engine.StoreOf(e); store != kind.Caps.Store {
		t.Errorf("kind %q declares Store %v, but engine.StoreOf(%T) finds a store: %v", kind.Name, kind.Caps.Store, e, store)
	}
	if _, cs := engine.ChannelStatesOf(e); cs != kind.Caps.ChannelStates {
		t.Errorf("kind %q declares ChannelStates %v, but engine.ChannelStatesOf(%T) finds them: %v", kind.Name, kind.Caps.ChannelStates, e, cs)
	}
}

// CheckDefaultTags checks that an options struct's default tags (the
// defaults a configuration file documents) are what the engine applies:
// for every field with a default tag that is zero in given, defaulted
// (given after the engine's defaults) holds the tag's value. Struct
// fields (sections) are checked below.
func CheckDefaultTags(t *testing.T, given, defaulted any) {
	t.Helper()
	if n := checkDefaults(t, "", reflect.ValueOf(given), reflect.ValueOf(defaulted)); n == 0 {
		t.Fatalf("%T has no default tags", given)
	}
}

func checkDefaults(t *testing.T, path string, given, got reflect.Value) int {
	t.Helper()
	checked := 0
	for i := 0; i < given.NumField(); i++ {
		f := given.Type().Field(i)
		name := path + f.Name
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Duration(0)) {
			if yaml, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); yaml != "-" {
				checked += checkDefaults(t, name+".", given.Field(i), got.Field(i))
			}
			continue
		}
		def, ok := f.Tag.Lookup("default")
		if !ok || !given.Field(i).IsZero() {
			continue
		}
		want, err := parseDefault(f.Type, def)
		if err != nil {
			t.Errorf("%s: default tag %q: %v", name, def, err)
			continue
		}
		if v := got.Field(i).Interface(); v != want {
			t.Errorf("%s: the engine's default is %v, the default tag says %v", name, v, want)
		}
		checked++
	}
	return checked
}

// parseDefault reads a default tag as a value of type typ.
func parseDefault(typ reflect.Type, def string) (any, error) {
	if typ == reflect.TypeOf(time.Duration(0)) {
		return time.ParseDuration(def)
	}
	var v any
	var err error
	switch typ.Kind() {
	case reflect.String:
		v = def
	case reflect.Bool:
		v, err = strconv.ParseBool(def)
	case reflect.Int, reflect.Int64:
		var n int64
		n, err = strconv.ParseInt(def, 10, 64)
		v = n
	case reflect.Float64:
		v, err = strconv.ParseFloat(def, 64)
	default:
		return nil, &reflect.ValueError{Method: "parseDefault", Kind: typ.Kind()}
	}
	if err != nil {
		return nil, err
	}
	return reflect.ValueOf(v).Convert(typ).Interface(), nil
}
