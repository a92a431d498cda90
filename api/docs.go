package api

import (
	"fmt"
	"strconv"
	"strings"
)

//go:generate go test -run ^TestGenerated -update

// The method tables of docs/api.md are generated from the method table,
// between markers that name the table:
//
//	<!-- api-table: methods -->
//	(generated)
//	<!-- end api-table -->
//
// "methods" is the request and result of each method Herald has;
// "index" is every row, with its number at the single endpoint, its gRPC
// rpc and its properties.

const (
	docTableOpen  = "<!-- api-table:"
	docTableClose = "<!-- end api-table -->"
)

// docsCommand is how to regenerate the docs, for the test that finds them
// out of date.
const docsCommand = "go generate ./api"

// updateDocs rewrites the generated tables of a Markdown document.
func updateDocs(doc string) (string, error) {
	var b strings.Builder
	rest := doc
	found := 0
	for {
		i := strings.Index(rest, docTableOpen)
		if i < 0 {
			b.WriteString(rest)
			break
		}
		end := strings.Index(rest[i:], "-->")
		closeAt := strings.Index(rest[i:], docTableClose)
		if end < 0 || closeAt < 0 {
			return "", fmt.Errorf("marker %q: unterminated, or no %s after it", rest[i:min(len(rest), i+40)], docTableClose)
		}
		name := strings.TrimSpace(rest[i+len(docTableOpen) : i+end])
		table, err := docTable(name)
		if err != nil {
			return "", err
		}
		b.WriteString(rest[:i+end+len("-->")])
		b.WriteString("\n\n" + table + "\n")
		b.WriteString(docTableClose)
		rest = rest[i+closeAt+len(docTableClose):]
		found++
	}
	if found == 0 {
		return "", fmt.Errorf("no %s markers found", docTableOpen)
	}
	return b.String(), nil
}

// docTable renders the table the marker names.
func docTable(name string) (string, error) {
	var b strings.Builder
	switch name {
	case "methods":
		b.WriteString("| method | request | result |\n|---|---|---|\n")
		for _, m := range methodTable() {
			if !m.unavailable {
				fmt.Fprintf(&b, "| `%s` | %s | %s |\n", m.name, m.params, m.result)
			}
		}
	case "index":
		b.WriteString("| method | what it does | number at `POST /api` | gRPC | in a batch | every node | safe to retry |\n|---|---|---|---|---|---|---|\n")
		for _, m := range methodTable() {
			number, rpc := "—", "—"
			if m.methodType != noMethodType {
				number = strconv.Itoa(m.methodType)
			}
			if md, err := rpcOf(&m); err == nil && (m.pb != nil || m.unavailable) {
				rpc = "`" + string(md.Name()) + "`"
			}
			doc := m.doc
			if m.unavailable {
				doc += ": not in Herald, answers 108"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", m.name, doc, number, rpc,
				yes(m.batchable && !m.unavailable), yes(m.clusterWide), yes(m.idempotent))
		}
	default:
		return "", fmt.Errorf("marker %q: no such table (want methods or index)", name)
	}
	return b.String(), nil
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return ""
}
