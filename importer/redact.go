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
	c.Version.Schema, _ = redactAnnotations(deepCopy(d.Version.Schema), r).(map[string]any)
	c.Agent, _ = redactAnnotations(deepCopy(d.Agent), r).(map[string]any)
	c.Components = make([]File, len(d.Components))
	for i, f := range d.Components {
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(f.Data))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("component %s: %w", f.Path, err)
		}
		data, err := schemaFile(redactAnnotations(doc, r).(map[string]any))
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

// redactAnnotations redacts the strings under annotation keywords of every
// schema object in v, in place, and returns v.
func redactAnnotations(v any, r *redact.Redactor) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if slices.Contains(annotationKeys, k) {
				t[k] = redactStrings(x, r)
			} else {
				t[k] = redactAnnotations(x, r)
			}
		}
	case []any:
		for i, x := range t {
			t[i] = redactAnnotations(x, r)
		}
	}
	return v
}

// redactStrings redacts every string in v (Redactor.Text), in place.
func redactStrings(v any, r *redact.Redactor) any {
	switch t := v.(type) {
	case string:
		return r.Text(t)
	case map[string]any:
		for k, x := range t {
			t[k] = redactStrings(x, r)
		}
	case []any:
		for i, x := range t {
			t[i] = redactStrings(x, r)
		}
	}
	return v
}

// deepCopy copies decoded JSON (maps and slices; other values shared).
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}
