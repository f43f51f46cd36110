package strictyaml

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/airlockdev/airlock/internal/config"
	"github.com/airlockdev/airlock/jsonpointer"
)

// checkKnown refuses a key that the struct it would be decoded into does
// not declare, at any depth, naming its line, column and RFC 6901 location.
// It reads struct fields the way the decoder does (the yaml tag's name, or
// the field name in lower case; "-" skips a field; ",inline" merges an
// embedded struct's fields, or accepts any key for an inline map).
func checkKnown(file string, n *yaml.Node, t reflect.Type) error {
	if err := known(n, t); err != nil {
		err.File = file
		return err
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

func known(n *yaml.Node, t reflect.Type) *config.Error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil // the decoder reports the type
		}
		fs := fieldsOf(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			ft, ok := fs.byName[k.Value]
			if !ok && fs.inline != nil {
				ft, ok = fs.inline, true
			}
			if !ok {
				return &config.Error{Line: k.Line, Column: k.Column, Key: "/" + jsonpointer.EscapeToken(k.Value),
					Msg: fmt.Sprintf("unknown key %q; the keys here are %s", k.Value, strings.Join(fs.names, ", "))}
			}
			if err := known(n.Content[i+1], ft); err != nil {
				err.Key = "/" + jsonpointer.EscapeToken(k.Value) + err.Key
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := known(n.Content[i+1], t.Elem()); err != nil {
				err.Key = "/" + jsonpointer.EscapeToken(n.Content[i].Value) + err.Key
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, c := range n.Content {
			if err := known(c, t.Elem()); err != nil {
				err.Key = "/" + strconv.Itoa(i) + err.Key
				return err
			}
		}
	}
	return nil
}

// fields is what a struct type accepts as keys.
type fields struct {
	byName map[string]reflect.Type
	names  []string     // sorted, for messages
	inline reflect.Type // element type of an inline map: any other key goes there
}

var fieldCache sync.Map // reflect.Type → *fields

func fieldsOf(t reflect.Type) *fields {
	if f, ok := fieldCache.Load(t); ok {
		return f.(*fields)
	}
	fs := &fields{byName: map[string]reflect.Type{}}
	addFields(fs, t)
	for name := range fs.byName {
		fs.names = append(fs.names, name)
	}
	slices.Sort(fs.names)
	fieldCache.Store(t, fs)
	return fs
}

func addFields(fs *fields, t reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "" && !strings.Contains(string(f.Tag), ":") {
			tag = string(f.Tag)
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if slices.Contains(strings.Split(opts, ","), "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch ft.Kind() {
			case reflect.Struct:
				addFields(fs, ft)
			case reflect.Map:
				fs.inline = ft.Elem()
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fs.byName[name] = f.Type
	}
}
