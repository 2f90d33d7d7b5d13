// Package filter compiles the small filter language every list tool shares,
// for example
//
//	method == INVITE and final_code >= 400 and from_user ~ "^10"
//
// One compiler checks field names and value types against a Schema the
// caller supplies, so an unknown field or a number compared with a string
// is an error that points at its column, never a filter that silently
// matches nothing. docs/filter.md is the operator's reference.
package filter
