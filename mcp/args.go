package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// argType is an argument type that knows its own schema: its range, enum,
// pattern and default come from the constants its checks use, so the
// schema a client reads and the check the box runs can never disagree
// (the check below runs on the schema itself).
type argType interface {
	argSchema() *jsonschema.Schema
}

// argSchema is a tool's checked input schema.
type argSchema struct {
	s   *jsonschema.Schema
	raw json.RawMessage // as advertised in tools/list
}

func (a *argSchema) names() []string {
	names := make([]string, 0, len(a.s.Properties))
	for n := range a.s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// allowFields sets the names fields may take: the schema then refuses an
// unknown column as it refuses any other bad value.
func (a *argSchema) allowFields(columns []string) {
	f := a.s.Properties["fields"]
	if f == nil || f.Items == nil {
		return
	}
	f.Items.Enum = make([]any, len(columns))
	for i, c := range columns {
		f.Items.Enum[i] = c
	}
	raw, err := json.Marshal(a.s)
	if err != nil {
		panic(err)
	}
	a.raw = raw
}

// inputSchemaOf builds In's schema with every argType's own schema, then
// collapses nullable unions (a strict client reads "type" as one string
// and drops a tool whose schema has a union; an absent or null optional
// argument is still accepted).
func inputSchemaOf[In any](tool string) *argSchema {
	t := reflect.TypeFor[In]()
	types := map[reflect.Type]*jsonschema.Schema{}
	collectArgTypes(t, types, map[reflect.Type]bool{})
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: types})
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", tool, err))
	}
	if s.Type != "object" {
		panic(fmt.Sprintf("tool %s: arguments must be a struct", tool))
	}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	if raw, err = strictInput(raw); err != nil {
		panic(fmt.Sprintf("tool %s: %v", tool, err))
	}
	var checked jsonschema.Schema
	if err := json.Unmarshal(raw, &checked); err != nil {
		panic(err)
	}
	if checked.Properties == nil {
		checked.Properties = map[string]*jsonschema.Schema{}
	}
	return &argSchema{s: &checked, raw: raw}
}

// collectArgTypes finds every argType reachable from t.
func collectArgTypes(t reflect.Type, out map[reflect.Type]*jsonschema.Schema, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if seen[t] {
		return
	}
	seen[t] = true
	if a, isArg := reflect.Zero(t).Interface().(argType); isArg {
		out[t] = a.argSchema()
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			collectArgTypes(t.Field(i).Type, out, seen)
		}
	case reflect.Slice, reflect.Array, reflect.Map:
		collectArgTypes(t.Elem(), out, seen)
	}
}

// decodeArgs checks raw arguments against the schema, answering in plain
// words what was wrong, then decodes them strictly into In.
func decodeArgs[In any](a *argSchema, args any) (In, error) {
	var in In
	raw, err := json.Marshal(args)
	if err != nil {
		return in, argErr("arguments", "send an object", "not JSON: %v", err)
	}
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return in, argErr("arguments", "send an object", "not JSON: %v", err)
	}
	if err := checkValue(a.s, "", v, true); err != nil {
		return in, err
	}
	dec = json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		// The schema accepted what Go cannot hold: the schema is wrong.
		return in, fmt.Errorf("arguments passed the schema but do not decode: %w", err)
	}
	return in, nil
}

// checkValue checks v against the subset of JSON Schema the generator
// writes (type, properties, required, additionalProperties, items, enum,
// minimum, maximum, pattern, maxLength, minItems, maxItems). path names
// the argument in messages; top is the arguments object itself.
func checkValue(s *jsonschema.Schema, path string, v any, top bool) error {
	if s == nil {
		return nil
	}
	name := path
	if top {
		name = "arguments"
	}
	hint := "see the tool's inputSchema in tools/list"
	switch s.Type {
	case "object":
		obj, isObj := v.(map[string]any)
		if !isObj {
			return argErr(name, hint, "want %s, got %s", expect(s), describe(v))
		}
		for _, req := range s.Required {
			if _, has := obj[req]; !has {
				return argErr(join(path, req), hint, "is required: want %s", expect(s.Properties[req]))
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			sub, known := s.Properties[k]
			if !known {
				if s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil || s.AdditionalProperties == nil {
					return argErr(join(path, k), hint, "unknown argument; %s takes %s", objectName(path, top), takes(s))
				}
				sub = s.AdditionalProperties
			}
			if obj[k] == nil && !slices.Contains(s.Required, k) {
				continue // null is the same as absent for an optional argument
			}
			if err := checkValue(sub, join(path, k), obj[k], false); err != nil {
				return err
			}
		}
		return nil
	case "array":
		arr, isArr := v.([]any)
		if !isArr {
			return argErr(name, hint, "want %s, got %s", expect(s), describe(v))
		}
		if s.MinItems != nil && len(arr) < *s.MinItems || s.MaxItems != nil && len(arr) > *s.MaxItems {
			return argErr(name, hint, "%d items: want %s", len(arr), expect(s))
		}
		for i, e := range arr {
			if err := checkValue(s.Items, fmt.Sprintf("%s[%d]", path, i), e, false); err != nil {
				return err
			}
		}
		return nil
	case "string":
		str, isStr := v.(string)
		if !isStr {
			return argErr(name, hint, "want %s, got %s", expect(s), describe(v))
		}
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, any(str)) {
			return argErr(name, hint, "%q is not %s", str, expect(s))
		}
		if s.MaxLength != nil && len(str) > *s.MaxLength {
			return argErr(name, hint, "%d bytes: want %s", len(str), expect(s))
		}
		if s.Pattern != "" && !regexp.MustCompile(s.Pattern).MatchString(str) {
			return argErr(name, hint, "%q: want %s", str, expect(s))
		}
		return nil
	case "integer", "number":
		n, isNum := v.(json.Number)
		if !isNum {
			return argErr(name, hint, "want %s, got %s", expect(s), describe(v))
		}
		f, err := n.Float64()
		if err != nil || math.IsInf(f, 0) {
			return argErr(name, hint, "%s: want %s", n, expect(s))
		}
		if s.Type == "integer" && !isIntegerLiteral(n.String()) {
			return argErr(name, hint, "%s is not a whole number: want %s", n, expect(s))
		}
		if s.Minimum != nil && f < *s.Minimum || s.Maximum != nil && f > *s.Maximum {
			return argErr(name, hint, "%s is out of range: want %s", n, expect(s))
		}
		if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return fmt.Sprint(e) == n.String() }) {
			return argErr(name, hint, "%s is not %s", n, expect(s))
		}
		return nil
	case "boolean":
		if _, isBool := v.(bool); !isBool {
			return argErr(name, hint, "want true or false, got %s", describe(v))
		}
		return nil
	}
	return nil
}

func isIntegerLiteral(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func objectName(path string, top bool) string {
	if top {
		return "this tool"
	}
	return path
}

// takes lists an object's properties for an unknown-argument message.
func takes(s *jsonschema.Schema) string {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return "no arguments"
	}
	return strings.Join(names, ", ")
}

// expect says in plain words what a schema accepts.
func expect(s *jsonschema.Schema) string {
	if s == nil {
		return "a value"
	}
	switch s.Type {
	case "object":
		return "an object"
	case "array":
		w := "a list of " + plural(expect(s.Items))
		if s.Items != nil && len(s.Items.Enum) > 0 {
			w = "a list of any of " + enumList(s.Items.Enum)
		}
		switch {
		case s.MinItems != nil && s.MaxItems != nil:
			w += fmt.Sprintf(", %d to %d of them", *s.MinItems, *s.MaxItems)
		case s.MaxItems != nil:
			w += fmt.Sprintf(", at most %d", *s.MaxItems)
		}
		return w
	case "string":
		switch {
		case len(s.Enum) > 0:
			return "one of " + enumList(s.Enum)
		case s.Format == "date-time":
			return "an RFC 3339 time such as 2026-01-02T15:04:05Z"
		case s.Pattern != "" && s.Description != "":
			return "a string: " + s.Description
		case s.MaxLength != nil:
			return fmt.Sprintf("a string of at most %d bytes", *s.MaxLength)
		}
		return "a string"
	case "integer", "number":
		w := "an integer"
		if s.Type == "number" {
			w = "a number"
		}
		if len(s.Enum) > 0 {
			return w + ", one of " + enumList(s.Enum)
		}
		switch {
		case s.Minimum != nil && s.Maximum != nil:
			w += " from " + num(*s.Minimum) + " to " + num(*s.Maximum)
		case s.Minimum != nil:
			w += " of at least " + num(*s.Minimum)
		case s.Maximum != nil:
			w += " of at most " + num(*s.Maximum)
		}
		if s.Default != nil {
			w += " (default " + string(s.Default) + ")"
		}
		return w
	case "boolean":
		return "true or false"
	}
	return "a value"
}

func plural(w string) string {
	for _, a := range []string{"an ", "a "} {
		if strings.HasPrefix(w, a) {
			w = strings.TrimPrefix(w, a)
			if i := strings.IndexAny(w, " :,"); i >= 0 {
				return w[:i] + "s" + w[i:]
			}
			return w + "s"
		}
	}
	return w
}

func enumList(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ", ")
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// describe names a JSON value's type for "got …".
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return fmt.Sprintf("a string (%q)", x)
	case json.Number:
		return "a number (" + x.String() + ")"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
