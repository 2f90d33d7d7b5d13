package mcp

import "strings"

// need is a set of the Deps fields tools read. Each bundle declares the
// stores its tools read (allBundles), and NewServer refuses a Deps that
// lacks one of a loaded bundle's, as it refuses an unknown bundle, so the
// tools read their stores without checking them for nil and a box that
// forgot to wire a store stops at start-up, not on the first call.
type need uint32

const (
	needCAN need = 1 << iota
	needJ1939
	needDBC
	needUDS
	needJ1587
	needSIP
	needSIPStats
	needSIPExport
	needMedia
	needTransmit
	needCaptures
	needFileCatalog
	needPorts
	needSource
	needLog
	needCoverage
	needFiles
	needTrunk
	needMarks
)

// needBox is what every server needs, whatever it loads: the adapter
// reads the source, the log and the coverage, the live views and the
// completions the ports, the file resources the sandbox.
const needBox = needPorts | needSource | needLog | needCoverage | needFiles

// depsFields names the field each need is and says whether d holds it:
// the one place a Deps field is checked for nil. The fields no need
// names are values, or states a tool reports (BlackBox.Recorder is nil
// when the recorder is off, BlackBox.Evidence when evidence is off,
// BlackBox.Downloads without HTTP).
var depsFields = []struct {
	need  need
	field string
	has   func(Deps) bool
}{
	{needCAN, "CAN", func(d Deps) bool { return d.CAN != nil }},
	{needJ1939, "J1939", func(d Deps) bool { return d.J1939 != nil }},
	{needDBC, "DBC", func(d Deps) bool { return d.DBC != nil }},
	{needUDS, "UDS", func(d Deps) bool { return d.UDS != nil }},
	{needJ1587, "J1587", func(d Deps) bool { return d.J1587 != nil }},
	{needSIP, "SIP", func(d Deps) bool { return d.SIP != nil }},
	{needSIPStats, "SIPStats", func(d Deps) bool { return d.SIPStats != nil }},
	{needSIPExport, "SIPExport", func(d Deps) bool { return d.SIPExport != nil }},
	{needMedia, "Media", func(d Deps) bool { return d.Media != nil }},
	{needTransmit, "Transmit", func(d Deps) bool { return d.Transmit != nil }},
	{needCaptures, "BlackBox.Captures", func(d Deps) bool { return d.BlackBox.Captures != nil }},
	{needFileCatalog, "BlackBox.Files", func(d Deps) bool { return d.BlackBox.Files != nil }},
	{needPorts, "Ports", func(d Deps) bool { return d.Ports != nil }},
	{needSource, "Source", func(d Deps) bool { return d.Source != nil }},
	{needLog, "Log", func(d Deps) bool { return d.Log != nil }},
	{needCoverage, "Coverage", func(d Deps) bool { return d.Coverage != nil }},
	{needFiles, "Files", func(d Deps) bool { return d.Files != nil }},
	{needTrunk, "Trunk", func(d Deps) bool { return d.Trunk != nil }},
	{needMarks, "Marks", func(d Deps) bool { return d.Marks != nil }},
}

// has reports whether every need of o is in n.
func (n need) has(o need) bool { return n&o == o }

// missing names the fields of want that d lacks, "Deps.SIP, Deps.Media",
// or "" when it has them all.
func (d Deps) missing(want need) string {
	var out []string
	for _, f := range depsFields {
		if want.has(f.need) && !f.has(d) {
			out = append(out, "Deps."+f.field)
		}
	}
	return strings.Join(out, ", ")
}
