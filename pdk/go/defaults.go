package pdk

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// defaulter fills the fields the input left out with their default tags,
// in a value already decoded from that input. It is compiled once per tool
// from the input type and its schema.
type defaulter struct {
	fields []fieldDefaulter // for a struct
	elem   *defaulter       // for the elements of a slice, array or map
}

type fieldDefaulter struct {
	name  string // JSON name
	index []int
	value reflect.Value // the default; invalid when the field has none
	sub   *defaulter    // defaults inside the field's value
}

// compileDefaulter returns nil when t has no default anywhere.
func compileDefaulter(t reflect.Type, s *schema) (*defaulter, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil, nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		elem, err := compileDefaulter(t.Elem(), s.items)
		if elem == nil || err != nil {
			return nil, err
		}
		return &defaulter{elem: elem}, nil
	case reflect.Map:
		elem, err := compileDefaulter(t.Elem(), s.additional)
		if elem == nil || err != nil {
			return nil, err
		}
		return &defaulter{elem: elem}, nil
	case reflect.Struct:
	default:
		return nil, nil
	}
	d := &defaulter{}
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, _, ok := fieldJSONName(f)
		ps := s.properties[name]
		if !ok || ps == nil {
			continue
		}
		fd := fieldDefaulter{name: name, index: f.Index}
		if ps.def != nil {
			v := reflect.New(f.Type)
			if err := json.Unmarshal(ps.def, v.Interface()); err != nil {
				return nil, fmt.Errorf("%s.%s: default: %w", t, f.Name, err)
			}
			fd.value = v.Elem()
		}
		sub, err := compileDefaulter(f.Type, ps)
		if err != nil {
			return nil, err
		}
		fd.sub = sub
		if fd.value.IsValid() || fd.sub != nil {
			d.fields = append(d.fields, fd)
		}
	}
	if len(d.fields) == 0 {
		return nil, nil
	}
	return d, nil
}

// apply fills defaults into v, decoded from instance (the same input
// decoded into an any, which tells which fields were present).
func (d *defaulter) apply(v reflect.Value, instance any) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		obj, _ := instance.(map[string]any)
		for _, fd := range d.fields {
			fv, err := v.FieldByIndexErr(fd.index)
			if err != nil {
				continue // inside a nil embedded pointer the input did not set
			}
			raw, present := obj[fd.name]
			switch {
			case present && fd.sub != nil:
				fd.sub.apply(fv, raw)
			case !present && fd.value.IsValid():
				fv.Set(fresh(fd.value))
			}
		}
	case reflect.Slice, reflect.Array:
		list, _ := instance.([]any)
		for i := 0; i < v.Len() && i < len(list); i++ {
			d.elem.apply(v.Index(i), list[i])
		}
	case reflect.Map:
		obj, _ := instance.(map[string]any)
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		iter := v.MapRange()
		for iter.Next() {
			elem := reflect.New(v.Type().Elem()).Elem()
			elem.Set(iter.Value())
			d.elem.apply(elem, obj[iter.Key().String()])
			v.SetMapIndex(iter.Key(), elem)
		}
	}
}

// fresh returns v, or a new pointer to a copy when v is a pointer, so that
// handlers never share a default through a pointer.
func fresh(v reflect.Value) reflect.Value {
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return v
	}
	p := reflect.New(v.Type().Elem())
	p.Elem().Set(v.Elem())
	return p
}
