package api

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/internal/docmarker"
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

// docsCommand is how to regenerate the docs, for the test that finds them
// out of date.
const docsCommand = "go generate ./api"

// updateDocs rewrites the generated tables of a Markdown document.
func updateDocs(doc string) (string, error) {
	return docmarker.Rewrite(doc, "api-table", docTable)
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
				doc += ": not in Herald (error 108 at `POST /api` and over gRPC)"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", m.name, doc, number, rpc,
				yes(m.batchable && !m.unavailable), yes(m.clusterWide), yes(m.idempotent))
		}
	default:
		return "", fmt.Errorf("no such table (want methods or index)")
	}
	return b.String(), nil
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return ""
}
