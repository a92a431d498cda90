package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/heraldhq/herald/internal/docmarker"
)

// The reference tables of docs/configuration.md are generated between
// markers that say which keys each table holds:
//
//	<!-- config-table: client -client.proxy -->
//	(generated)
//	<!-- end config-table -->
//
// A word is a key: the table holds it and the keys below it; "-key"
// leaves out the key and the keys below it, "-key.*" only the keys below
// it. The word "namespace" makes the table of a namespace's options, by
// their own names.

// DocsCommand is how to regenerate the tables, for the messages that say
// they are out of date.
const DocsCommand = "go generate ./config (or: herald config docs docs/configuration.md)"

// UpdateDocs rewrites the generated tables of a Markdown document, doc,
// from the option definitions, and returns the result.
func UpdateDocs(doc string) (string, error) {
	return docmarker.Rewrite(doc, "config-table", referenceTable)
}

// row is one line of a reference table.
type row struct{ key, def, doc string }

// referenceTable renders the table the marker spec names.
func referenceTable(spec string) (string, error) {
	words := strings.Fields(spec)
	if len(words) == 0 {
		return "", fmt.Errorf("names no keys")
	}
	var rows []row
	if words[0] == "namespace" {
		ns := reflect.New(reflect.TypeOf(Namespace{})).Elem()
		applyDefaults(ns)
		rows = tableRows(ns, "")
	} else {
		cfg := reflect.ValueOf(Default())
		var include, exclude, excludeBelow []string
		for _, w := range words {
			switch {
			case strings.HasPrefix(w, "-") && strings.HasSuffix(w, ".*"):
				excludeBelow = append(excludeBelow, strings.TrimSuffix(w[1:], ".*"))
			case strings.HasPrefix(w, "-"):
				exclude = append(exclude, w[1:])
			default:
				include = append(include, w)
			}
		}
		under := func(key string, prefixes []string) bool {
			for _, p := range prefixes {
				if key == p || strings.HasPrefix(key, p+".") {
					return true
				}
			}
			return false
		}
		below := func(key string, prefixes []string) bool {
			for _, p := range prefixes {
				if strings.HasPrefix(key, p+".") {
					return true
				}
			}
			return false
		}
		for _, r := range tableRows(cfg, "") {
			if under(r.key, include) && !under(r.key, exclude) && !below(r.key, excludeBelow) {
				rows = append(rows, r)
			}
		}
	}
	if len(rows) == 0 {
		return "", fmt.Errorf("names no keys")
	}
	var b strings.Builder
	b.WriteString("| key | default | meaning |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.key, r.def, r.doc)
	}
	return b.String(), nil
}

// tableRows lists the documented keys of the struct value v, and below.
func tableRows(v reflect.Value, prefix string) []row {
	var rows []row
	for _, o := range options(v.Type()) {
		key := join(prefix, o.key)
		fv := v.FieldByIndex(o.index)
		switch {
		case isSection(o.typ):
			if o.doc != "" {
				rows = append(rows, row{key, "", markdownDoc(o.doc)})
			}
			rows = append(rows, tableRows(fv, key)...)
		case o.typ.Kind() == reflect.Slice && isSection(o.typ.Elem()):
			rows = append(rows, row{key, "none", markdownDoc(o.doc)})
			item := reflect.New(o.typ.Elem()).Elem()
			applyDefaults(item)
			rows = append(rows, tableRows(item, key)...)
		default:
			rows = append(rows, row{key, defaultCell(o, fv), markdownDoc(o.doc)})
		}
	}
	return rows
}

// defaultCell is the default column of a key: defaultdoc, else the value.
func defaultCell(o option, v reflect.Value) string {
	if o.defaultDoc != "" {
		return markdownDoc(o.defaultDoc)
	}
	if v.IsZero() && (v.Kind() == reflect.String || v.Kind() == reflect.Slice || v.Kind() == reflect.Map) {
		return "none"
	}
	if v.Kind() == reflect.String {
		return "`" + v.String() + "`"
	}
	return "`" + valueText(o, v) + "`"
}

// codeSpan finds 'code' in a doc tag: quotes that open after a space or
// punctuation and close before one, so that apostrophes ("node's") stay.
var codeSpan = regexp.MustCompile(`(^|[\s(\[,;:])'([^'\s][^']*?)'($|[\s).,;:\]])`)

// markdownDoc is a doc tag for Markdown: 'code' becomes a code span, and
// a | is escaped so that it stays in its cell.
func markdownDoc(doc string) string {
	// Twice: adjacent spans share the character between them.
	for range 2 {
		doc = codeSpan.ReplaceAllString(doc, "$1`$2`$3")
	}
	return strings.ReplaceAll(doc, "|", `\|`)
}
