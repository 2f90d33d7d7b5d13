package mcp

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// Argument types shared by every tool. Each carries its schema (argType),
// so the bound a client reads is the bound the box checks.

func intSchema(desc string, lo, hi float64) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Description: desc, Minimum: &lo, Maximum: &hi}
}

func withDefault(s *jsonschema.Schema, v any) *jsonschema.Schema {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	s.Default = b
	return s
}

// Page sizes: one default and one maximum for every list tool. A row of
// the widest list (a dialog) is about 1 KB, so a full page stays near a
// megabyte and the byte budget refuses with a narrower suggestion before
// anything is cut.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// limitArg is a page size: absent means DefaultLimit; 0 is refused.
type limitArg int

func (limitArg) argSchema() *jsonschema.Schema {
	return withDefault(intSchema(fmt.Sprintf("rows per page, at most %d (default %d); follow page.next_cursor for the rest", MaxLimit, DefaultLimit), 1, MaxLimit), DefaultLimit)
}

func (l limitArg) rows() int {
	if l == 0 {
		return DefaultLimit
	}
	return int(l)
}

// cursorArg is a page.next_cursor handed back.
type cursorArg string

func (cursorArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: "page.next_cursor of the previous answer; opaque"}
}

// Paging is embedded in the arguments of every list tool.
type Paging struct {
	Limit  limitArg  `json:"limit,omitempty"`
	Cursor cursorArg `json:"cursor,omitempty"`
}

// Projection is embedded in the arguments of every list tool: the columns
// of each row to return. The envelope (page, source, warnings, errors) is
// never projected, because it is how a caller knows what it did not get.
// The registry sets the allowed names as the schema's enum.
type Projection struct {
	Fields []string `json:"fields,omitempty" jsonschema:"columns to return per row (default all); the row's id columns always come back"`
}

// projectionOf returns the fields asked for, if In has a Projection.
func projectionOf(in any) []string {
	if p, has := in.(interface{ projected() []string }); has {
		return p.projected()
	}
	return nil
}

func (p Projection) projected() []string { return p.Fields }

// portArg is a port name.
type portArg string

func (portArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: "port name as capture_status lists it; empty means every port of the kind"}
}

// PortSelector is embedded by every tool that reads per-port data: one
// meaning for empty (every port of the tool's kind), and an unknown name
// refused with the list of ports (ports.go).
type PortSelector struct {
	Port portArg `json:"port,omitempty"`
}

// sourceAddress is a J1939 source or destination address.
type sourceAddress int

func (sourceAddress) argSchema() *jsonschema.Schema {
	return intSchema("J1939 address, 0 to 255 (254 is null, 255 global)", 0, 255)
}

// maxPGN is the largest 18-bit parameter group number.
const maxPGN = 1<<18 - 1

// pgnArg is a J1939 PGN.
type pgnArg int

func (pgnArg) argSchema() *jsonschema.Schema {
	return intSchema("J1939 parameter group number, decimal (61444 is EEC1, 65260 the VIN)", 0, maxPGN)
}

// maxSPN is the largest 19-bit suspect parameter number.
const maxSPN = 1<<19 - 1

// spnArg is a J1939 SPN.
type spnArg int

func (spnArg) argSchema() *jsonschema.Schema {
	return intSchema("J1939 suspect parameter number (190 is engine speed)", 0, maxSPN)
}

// midArg is a J1708 message identifier.
type midArg int

func (midArg) argSchema() *jsonschema.Schema {
	return intSchema("J1708 MID, 0 to 255 (J1587 MIDs are 128 and up)", 0, 255)
}

// maxPID is the largest J1587 PID: page 2 PIDs are written 256 + x.
const maxPID = 511

// pidArg is a J1587 parameter identifier.
type pidArg int

func (pidArg) argSchema() *jsonschema.Schema {
	return intSchema("J1587 PID, 0 to 511 (page 2 as 256 + PID)", 0, maxPID)
}

// timeArg is an RFC 3339 time.
type timeArg string

func (timeArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Format: "date-time", Description: "RFC 3339 time, capture clock"}
}

// parse returns the time, or the zero time when absent.
func (t timeArg) parse(arg string) (time.Time, error) {
	if t == "" {
		return time.Time{}, nil
	}
	v, err := time.Parse(time.RFC3339Nano, string(t))
	if err != nil {
		return time.Time{}, argErr(arg, "write times as RFC 3339, e.g. 2026-01-02T15:04:05Z", "%q is not an RFC 3339 time", string(t))
	}
	return v, nil
}

// window is a time range: since inclusive, until exclusive.
type window struct {
	Since timeArg `json:"since,omitempty" jsonschema:"only at or after this RFC 3339 time"`
	Until timeArg `json:"until,omitempty" jsonschema:"only before this RFC 3339 time"`
}

// span is a parsed window; a zero bound is open.
type span struct{ since, until time.Time }

func (w window) span() (span, error) {
	s, err := w.Since.parse("since")
	if err != nil {
		return span{}, err
	}
	u, err := w.Until.parse("until")
	if err != nil {
		return span{}, err
	}
	if !s.IsZero() && !u.IsZero() && !u.After(s) {
		return span{}, argErr("until", "until must be after since", "%s is not after since %s", w.Until, w.Since)
	}
	return span{s, u}, nil
}

func (s span) holds(t time.Time) bool {
	return (s.since.IsZero() || !t.Before(s.since)) && (s.until.IsZero() || t.Before(s.until))
}

// hexPattern is 1 to 8 hex digits, the one hex spelling of ids and masks.
const hexPattern = "^[0-9A-Fa-f]{1,8}$"

// canIDArg is a CAN id in hex: up to 3 digits is 11-bit, more is 29-bit.
type canIDArg string

func (canIDArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: hexPattern, Description: "hex CAN id, 1 to 8 digits: up to 3 is an 11-bit id, 4 or more a 29-bit one"}
}

// hexMaskArg is a hex mask.
type hexMaskArg string

func (hexMaskArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: hexPattern, Description: "hex mask of 1 to 8 digits applied to both ids"}
}

// hexValue parses a pattern-checked hex argument.
func hexValue(s string) uint32 {
	v, _ := strconv.ParseUint(s, 16, 32)
	return uint32(v)
}

// enumArg builds the schema of a string argument with a fixed set of
// values, taken from the constants the services define.
func enumArg(desc string, values []string) *jsonschema.Schema {
	e := make([]any, len(values))
	for i, v := range values {
		e[i] = v
	}
	return &jsonschema.Schema{Type: "string", Description: desc, Enum: e}
}
