package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/airlockdev/airlock/redact"
)

// redactDraft returns a copy of d with the secrets the redactor finds
// taken out of everything Write writes (WriteOptions.Redactor); a note
// says which examples had any.
func redactDraft(d *Draft, r *redact.Redactor) (*Draft, error) {
	c := *d
	c.Description = r.Text(d.Description)
	c.Header = textAll(d.Header, r)
	c.FormatsWhy = textAll(d.FormatsWhy, r)
	c.Notes = slices.Clone(d.Notes)
	c.Version.Description = r.Text(d.Version.Description)
	c.Version.Comment = textAll(d.Version.Comment, r)
	c.Version.Schema, _ = redactSchema(d.Version.Schema, r, inSchema).(map[string]any)
	c.Agent, _ = redactSchema(d.Agent, r, inSchema).(map[string]any)
	c.Components = make([]File, len(d.Components))
	for i, f := range d.Components {
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(f.Data))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("component %s: %w", f.Path, err)
		}
		data, err := SchemaFile(redactSchema(doc, r, inSchema).(map[string]any))
		if err != nil {
			return nil, err
		}
		c.Components[i] = File{Path: f.Path, Data: data}
	}
	c.Examples = make([]Example, len(d.Examples))
	for i, ex := range d.Examples {
		out, found, _ := r.Body(ex.Body)
		c.Examples[i] = Example{Name: ex.Name, Body: out, From: r.Text(ex.From)}
		if len(found) > 0 {
			var at []string
			for _, f := range found {
				if f.Pointer != "" {
					at = append(at, f.Pointer)
				}
			}
			c.Examples[i].From += fmt.Sprintf("; %d secret(s) redacted", len(found))
			c.Notes = append(c.Notes, fmt.Sprintf("example %s: %d secret(s) redacted before it was written (%s)", ex.Name, len(found), namesNote(at)))
		}
	}
	return &c, nil
}

func textAll(ss []string, r *redact.Redactor) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.Text(s)
	}
	return out
}

// annotationKeys are the schema keywords whose values are for people, not
// for validation: their strings are redacted.
var annotationKeys = []string{"description", "title", "$comment", "default", "examples"}

// What a value of a schema document is, for redactSchema.
type schemaPlace int

const (
	inSchema     schemaPlace = iota // a schema, or a keyword's value
	inNames                         // the names → schemas map of properties, $defs, …
	inAnnotation                    // an annotation's value: every string redacted
)

// redactSchema returns a copy of v (decoded JSON at place) in which the
// strings of annotation keywords are redacted (Redactor.Text). Member
// names of properties, patternProperties, $defs and dependentSchemas are
// names, not keywords: a property called "description" stays a schema.
func redactSchema(v any, r *redact.Redactor, place schemaPlace) any {
	switch t := v.(type) {
	case string:
		if place == inAnnotation {
			return r.Text(t)
		}
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			next := inSchema
			switch {
			case place == inAnnotation:
				next = inAnnotation
			case place == inSchema && slices.Contains(annotationKeys, k):
				next = inAnnotation
			case place == inSchema && slices.Contains(append(valueMap[:len(valueMap):len(valueMap)], "$defs", "dependentSchemas"), k):
				next = inNames
			}
			out[k] = redactSchema(x, r, next)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = redactSchema(x, r, place)
		}
		return out
	}
	return v
}
