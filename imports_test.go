package fieldtap_test

// The import rules of DESIGN.md §2, checked on the real dependency graph
// of non-test code (go list -test=false). Tests are not checked: a test
// may wire packages together as the daemon does (mcp's tests reach a real
// client through mcp/front's transports, front's tests serve mcp's real
// server) and uses the test-support packages: tools/refdata for the
// reference data, tools/tmpfs for a full disk, tools/freeport for the
// ports of the servers a test starts.
//
//   - services/ never reaches mcp/, and of drivers/ only the shared
//     vocabulary drivers/wire;
//   - drivers/ reaches neither services/ nor mcp/;
//   - mcp/ never reaches board/, and of drivers/ only drivers/wire (a
//     tool reads stores; bytes for a bus go through services/);
//   - drivers/wire reaches no other fieldtap package;
//   - board/ reaches neither firmware/, services/ nor mcp/ (the daemon
//     wires a board to the rest, never the other way);
//   - firmware/config never reaches mcp/ (the MCP server owns its
//     defaults and bounds);
//   - mcp/ is split by job. mcp/auth (tokens, callers, scopes),
//     mcp/answerjson (answers escaped once) and mcp/callslot (a call's
//     concurrency slot) reach no other fieldtap package; mcp/audit
//     reaches only mcp/auth of mcp/; the front door mcp/front serves the
//     server it is given and never reaches mcp itself, only those four;
//     nothing under mcp/ reaches mcp/front (the daemon wires the two);
//   - nothing outside tools/ reaches tools/: the operator CLI may use the
//     product (board/sim's generators for `fieldtap gen`, firmware/config
//     and board for `plan run` and `button press`), never the other way;
//   - the fencing type, mcp/untrusted, reaches no other fieldtap
//     package, and services/ never reaches it (as it reaches no mcp/):
//     services/ returns plain values, mcp/ fences sender text when it
//     builds a row, and a document services/ writes takes the fence as a
//     function from the daemon (docs/architecture.md).

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const (
	wirePkg      = "fieldtap/drivers/wire"
	untrustedPkg = "fieldtap/mcp/untrusted"
)

// The packages mcp/ is split into.
const (
	mcpAuth     = "fieldtap/mcp/auth"
	mcpAudit    = "fieldtap/mcp/audit"
	mcpFront    = "fieldtap/mcp/front"
	mcpAnswer   = "fieldtap/mcp/answerjson"
	mcpCallslot = "fieldtap/mcp/callslot"
)

// importRule bans, for every package under from and not under unless,
// any dependency under one of banned, except the packages allowed by name.
type importRule struct {
	from    string
	unless  string
	banned  []string
	allowed []string
}

var importRules = []importRule{
	{from: "fieldtap/services/", banned: []string{"fieldtap/mcp", "fieldtap/drivers/", "fieldtap/board", "fieldtap/firmware"}, allowed: []string{wirePkg}},
	{from: "fieldtap/drivers/", banned: []string{"fieldtap/services/", "fieldtap/mcp", "fieldtap/firmware", "fieldtap/board"}},
	{from: "fieldtap/mcp", banned: []string{"fieldtap/drivers/", "fieldtap/board", "fieldtap/firmware"}, allowed: []string{wirePkg}},
	{from: wirePkg, banned: []string{"fieldtap/"}},
	{from: "fieldtap/board", banned: []string{"fieldtap/firmware", "fieldtap/services/", "fieldtap/mcp"}},
	{from: "fieldtap/firmware/config", banned: []string{"fieldtap/mcp"}},
	{from: mcpAuth, banned: []string{"fieldtap/"}},
	{from: mcpAnswer, banned: []string{"fieldtap/"}},
	{from: mcpCallslot, banned: []string{"fieldtap/"}},
	{from: mcpAudit, banned: []string{"fieldtap/mcp"}, allowed: []string{mcpAuth}},
	{from: mcpFront, banned: []string{"fieldtap/mcp"}, allowed: []string{mcpAuth, mcpAudit, mcpAnswer, mcpCallslot}},
	{from: "fieldtap/mcp", banned: []string{mcpFront}},
	{from: "fieldtap/", unless: "fieldtap/tools/", banned: []string{"fieldtap/tools/"}},
	{from: untrustedPkg, banned: []string{"fieldtap/"}},
	// pion/srtp encrypts the SRTP tests' packets as an independent
	// implementation: ground truth for tests, never part of the product,
	// whose SRTP is services/srtp's.
	{from: "fieldtap/", banned: []string{"github.com/pion/"}},
}

func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test=false", "-json=ImportPath,Deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := map[string]int{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		for _, r := range importRules {
			if !r.covers(p.ImportPath) {
				continue
			}
			checked[r.from]++
			for _, d := range p.Deps {
				if r.bans(p.ImportPath, d) {
					t.Errorf("%s depends on %s", p.ImportPath, d)
				}
			}
		}
	}
	for _, r := range importRules {
		if checked[r.from] == 0 {
			t.Errorf("no package matched %s: the rule is looking at the wrong tree", r.from)
		}
	}
}

// covers reports whether the rule looks at package pkg.
func (r importRule) covers(pkg string) bool {
	return strings.HasPrefix(pkg, r.from) && (r.unless == "" || !strings.HasPrefix(pkg, r.unless))
}

func (r importRule) bans(from, dep string) bool {
	for _, a := range r.allowed {
		if dep == a {
			return false
		}
	}
	for _, b := range r.banned {
		if !strings.HasPrefix(dep, b) {
			continue
		}
		// A package may reach itself and its own subpackages, unless the
		// rule names one of them (mcp never reaches mcp/front).
		own := dep == from || strings.HasPrefix(dep, from+"/")
		if !own || strings.HasPrefix(b, from+"/") {
			return true
		}
	}
	return false
}

// TestImportRuleCatchesAViolation keeps the rule check honest: each kind of
// edge the rules exist for is reported.
func TestImportRuleCatchesAViolation(t *testing.T) {
	for _, tc := range []struct {
		from, dep string
		want      bool
	}{
		{"fieldtap/services/sip", "fieldtap/mcp", true},
		{"fieldtap/services/canbus", "fieldtap/drivers/capture", true},
		{"fieldtap/services/canbus", wirePkg, false},
		{"fieldtap/mcp", "fieldtap/drivers/slcan", true},
		{"fieldtap/mcp", wirePkg, false},
		{wirePkg, "fieldtap/drivers/capture", true},
		{"fieldtap/board", "fieldtap/firmware/config", true},
		{"fieldtap/board/sim", "fieldtap/drivers/capture", false},
		{"fieldtap/firmware/config", "fieldtap/mcp", true},
		{"fieldtap/firmware/config", "fieldtap/board", false},
		{mcpAuth, "fieldtap/services/transmit", true},
		{mcpAuth, "fieldtap/mcp", true},
		{mcpAudit, "fieldtap/mcp", true},
		{mcpAudit, mcpAuth, false},
		{mcpAudit, "fieldtap/services/transmit", false},
		{mcpFront, "fieldtap/mcp", true},
		{mcpFront, mcpAudit, false},
		{mcpFront, "fieldtap/services/sandbox", false},
		{"fieldtap/mcp", mcpFront, true},
		{"fieldtap/mcp", mcpAudit, false},
		{mcpAnswer, mcpFront, true},
		{mcpCallslot, "fieldtap/mcp", true},
		{"fieldtap/board/sim", "fieldtap/tools/gen/sipgen", true},
		{"fieldtap/firmware/daemon", "fieldtap/tools/refdata", true},
		{"fieldtap/tools/cmd/fieldtap", "fieldtap/board/sim/sipgen", false},
		{"fieldtap/tools/cmd/fieldtap", "fieldtap/firmware/config", false},
		{"fieldtap/tools/cmd/fieldtap", "fieldtap/tools/refdata", false},
		{"fieldtap/services/mqttpub", untrustedPkg, true},
		{"fieldtap/services/isotp", untrustedPkg, true},
		{"fieldtap/mcp", untrustedPkg, false},
		{"fieldtap/firmware/daemon", untrustedPkg, false},
		{untrustedPkg, "fieldtap/services/sip", true},
	} {
		hit := false
		for _, r := range importRules {
			if r.covers(tc.from) && r.bans(tc.from, tc.dep) {
				hit = true
			}
		}
		if hit != tc.want {
			t.Errorf("%s → %s: banned %v, want %v", tc.from, tc.dep, hit, tc.want)
		}
	}
}
