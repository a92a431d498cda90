package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"
)

// OpenAPI returns the OpenAPI 3 document of the HTTP API, produced from
// the method table: a path per method with its request and result schemas
// (made from the Go types and their json tags), the batch and the single
// endpoint. docs/openapi.json is this document.
func OpenAPI() []byte {
	g := &openAPI{schemas: map[string]any{}}
	errorRef := g.schema(reflect.TypeFor[Error]())
	paths := map[string]any{}
	commandProps := map[string]any{}
	replyProps := map[string]any{"error": errorRef}
	for _, m := range methodTable() {
		if m.unavailable {
			continue
		}
		req, res := g.schema(m.req), g.schema(m.res)
		if m.batchable {
			commandProps[m.name] = req
			replyProps[m.name] = res
		}
		paths["/api/"+m.name] = g.operation(m.name, m.doc, "Request: "+m.params+". Result: "+m.result+".", req,
			object(map[string]any{"result": res}, "result"), errorRef)
	}
	g.schemas["Command"] = withDoc(object(commandProps), "one command of a batch: one method-named field, the first set one in the order of the methods runs")
	g.schemas["Reply"] = withDoc(object(replyProps), "one reply of a batch: the error, or the result named as the command")
	batch := object(map[string]any{"commands": array(ref("Command")), "parallel": map[string]any{"type": "boolean"}})
	paths["/api/batch"] = g.operation("batch", "run several commands in one request",
		"The replies are not wrapped in result; each holds its method-named result or its error. Always 200.",
		batch, object(map[string]any{"replies": array(ref("Reply"))}, "replies"), nil)
	legacy := object(map[string]any{
		"id":     map[string]any{"type": "integer", "minimum": 0},
		"method": map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}, "description": "a method name in any case, or its number in Centrifugo's Command.MethodType"},
		"params": map[string]any{"description": "the request of /api/<method>"},
	}, "method")
	paths["/api"] = g.operation("legacy", "the single endpoint of older Centrifugo clients",
		"The body is one command or several, one JSON object after another (newline-separated); the answer is one reply per command, in order, newline-separated. Always 200.",
		legacy, object(map[string]any{"id": map[string]any{"type": "integer"}, "result": map[string]any{}, "error": errorRef}), nil)
	doc := map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{
			"title":       "Herald server HTTP API",
			"version":     "1",
			"description": "Centrifugo's server HTTP API as Herald serves it (docs/api.md). Errors are answered with 200 and {\"error\":{…}}, or in transport error mode (X-Centrifugo-Error-Mode: transport) as the bare error with an HTTP status per code.",
		},
		"security": []any{map[string]any{"apiKey": []any{}}, map[string]any{"authorization": []any{}}},
		"paths":    paths,
		"components": map[string]any{
			"schemas": g.schemas,
			"securitySchemes": map[string]any{
				"apiKey":        map[string]any{"type": "apiKey", "in": "header", "name": "X-API-Key"},
				"authorization": map[string]any{"type": "apiKey", "in": "header", "name": "Authorization", "description": "apikey <KEY>"},
			},
		},
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		// Only maps, slices and strings: cannot fail.
		panic("api: encode the OpenAPI document: " + err.Error())
	}
	return append(out, '\n')
}

// openAPI gathers the named schemas of one document.
type openAPI struct {
	schemas map[string]any
}

// operation is the POST of one path. errorRef, when set, adds the error
// answer of a method.
func (g *openAPI) operation(id, summary, description string, req, res, errorRef any) map[string]any {
	ok := res
	if errorRef != nil {
		ok = map[string]any{"oneOf": []any{res, object(map[string]any{"error": errorRef}, "error")}}
	}
	plain := func(why string) map[string]any {
		return map[string]any{"description": why, "content": map[string]any{"text/plain": map[string]any{"schema": map[string]any{"type": "string"}}}}
	}
	return map[string]any{"post": map[string]any{
		"operationId": id,
		"summary":     summary,
		"description": description,
		"requestBody": map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": req}}},
		"responses": map[string]any{
			"200": map[string]any{"description": "the answer", "content": map[string]any{"application/json": map[string]any{"schema": ok}}},
			"400": plain("the body is not JSON"),
			"401": map[string]any{"description": "missing or wrong API key"},
			"404": map[string]any{"description": "unknown method (error 104)"},
			"408": plain("the body did not arrive within http_api.body_read_timeout"),
			"413": plain("the body is larger than http_api.max_body_size"),
		},
	}}
}

// schema is the JSON schema of Go type t as encoding/json writes and
// reads it: a named struct is a reference to a component schema.
func (g *openAPI) schema(t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeFor[json.RawMessage]():
		return map[string]any{"description": "any JSON value"}
	case reflect.TypeFor[rawJSON]():
		return map[string]any{"description": "the payload as published: JSON, or binary as a base64 string"}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer", "format": intFormat(t)}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "format": intFormat(t), "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "byte"}
		}
		return array(g.schema(t.Elem()))
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
	case reflect.Struct:
		if t.Name() == "" {
			return g.object(t)
		}
		name := exportedName(t.Name())
		if t == reflect.TypeFor[Error]() {
			// protocol.CodedError, named as the API's error object is
			// named in Centrifugo's description.
			name = "Error"
		}
		if _, ok := g.schemas[name]; !ok {
			g.schemas[name] = nil // a recursive type refers to itself
			g.schemas[name] = g.object(t)
		}
		return ref(name)
	}
	return map[string]any{}
}

// object is the schema of a struct: its json-tagged fields.
func (g *openAPI) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = g.schema(f.Type)
	}
	return object(props)
}

func object(props map[string]any, required ...string) map[string]any {
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func withDoc(schema map[string]any, doc string) map[string]any {
	schema["description"] = doc
	return schema
}

func array(items any) map[string]any { return map[string]any{"type": "array", "items": items} }

func ref(name string) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

func intFormat(t reflect.Type) string {
	if t.Bits() <= 32 {
		return "int32"
	}
	return "int64"
}

// exportedName is a Go type name as a schema name: publishRequest is
// PublishRequest.
func exportedName(name string) string {
	r, n := utf8.DecodeRuneInString(name)
	return string(unicode.ToUpper(r)) + name[n:]
}
