package mcp

import (
	"reflect"
	"sync"
)

// fenceTagged returns a copy of v in which every string tagged
// `untrusted:"…"` (a string, *string, []string or map of strings) is
// fenced, and whether any non-empty value was. It copies only the parts
// that lead to a tagged field and never writes through v: rows often
// share slices with a store.
func fenceTagged[T any](v T) (T, bool) {
	rv := reflect.ValueOf(&v).Elem()
	if !needsFence(rv.Type()) {
		return v, false
	}
	out, fenced := fenceValue(rv, notFenced)
	return out.Interface().(T), fenced
}

// fenceTypes caches, per type, whether a tagged field is reachable.
var fenceTypes sync.Map // reflect.Type → bool

func needsFence(t reflect.Type) bool {
	if v, ok := fenceTypes.Load(t); ok {
		return v.(bool)
	}
	fenceTypes.Store(t, false) // a recursive type meets this while it is walked
	n := needsFence1(t)
	fenceTypes.Store(t, n)
	return n
}

func needsFence1(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return needsFence(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if fenceKindOf(f.Tag.Get("untrusted")) != notFenced || needsFence(f.Type) {
				return true
			}
		}
	}
	return false
}

// fenceValue copies v, fencing strings with kind k (set by the tag of the
// field they hang from) and recursing where a tagged field is reachable.
func fenceValue(v reflect.Value, k fenceKind) (reflect.Value, bool) {
	t := v.Type()
	if k == notFenced && !needsFence(t) {
		return v, false
	}
	switch t.Kind() {
	case reflect.String:
		s := v.String()
		out := reflect.New(t).Elem()
		out.SetString(fence(s, k))
		return out, s != ""
	case reflect.Pointer:
		if v.IsNil() {
			return v, false
		}
		e, f := fenceValue(v.Elem(), k)
		p := reflect.New(t.Elem())
		p.Elem().Set(e)
		return p, f
	case reflect.Slice:
		if v.IsNil() {
			return v, false
		}
		out := reflect.MakeSlice(t, v.Len(), v.Len())
		hit := false
		for i := range v.Len() {
			e, f := fenceValue(v.Index(i), k)
			out.Index(i).Set(e)
			hit = hit || f
		}
		return out, hit
	case reflect.Array:
		out := reflect.New(t).Elem()
		hit := false
		for i := range v.Len() {
			e, f := fenceValue(v.Index(i), k)
			out.Index(i).Set(e)
			hit = hit || f
		}
		return out, hit
	case reflect.Map:
		if v.IsNil() {
			return v, false
		}
		out := reflect.MakeMapWithSize(t, v.Len())
		hit := false
		for it := v.MapRange(); it.Next(); {
			e, f := fenceValue(it.Value(), k)
			out.SetMapIndex(it.Key(), e)
			hit = hit || f
		}
		return out, hit
	case reflect.Struct:
		out := reflect.New(t).Elem()
		out.Set(v)
		hit := false
		for i := range t.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			fk := fenceKindOf(sf.Tag.Get("untrusted"))
			if fk == notFenced && !needsFence(sf.Type) {
				continue
			}
			e, f := fenceValue(v.Field(i), fk)
			out.Field(i).Set(e)
			hit = hit || f
		}
		return out, hit
	}
	return v, false
}
