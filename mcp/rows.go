package mcp

// Helpers for the row constructors (xRowOf) that build a tool's answer
// rows from what services/ returns. A row with the value's fields one for
// one is a conversion, j1939DTCRow(d): a field added in services/ then
// fails to compile in mcp/ until the answer decides about it.

// mapRows builds one row per value. A nil list stays nil and an empty one
// empty, so the answer says null or [] as the services value does.
func mapRows[V, R any](vs []V, row func(V) R) []R {
	if vs == nil {
		return nil
	}
	out := make([]R, len(vs))
	for i, v := range vs {
		out[i] = row(v)
	}
	return out
}

// rowOrNil builds the row of *v, or nil (null) without one.
func rowOrNil[V, R any](v *V, row func(V) R) *R {
	if v == nil {
		return nil
	}
	r := row(*v)
	return &r
}
