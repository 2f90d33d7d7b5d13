package board

import (
	"bytes"
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

//go:embed profiles/*.toml
var profileFS embed.FS

// Profile is one board: its ports and lines. Ports are Port values,
// so a profile and a configuration file open ports by one mechanism.
type Profile struct {
	Name        string `toml:"name"`
	Description string `toml:"description"`
	// Tested is false for a profile written from public pinouts and never
	// run on the hardware; the daemon logs it at start-up.
	Tested    bool   `toml:"tested_on_hardware"`
	Reference string `toml:"reference"` // where the pinout came from
	// MemoryBudgetMiB is fieldtapd's share of the board's RAM: every
	// store's bound is derived from it and the Go runtime's soft limit
	// is set to it. memory_limit_mib in the configuration overrides it.
	MemoryBudgetMiB int `toml:"memory_budget_mib"`
	// OpenedCaptures is how many ports for open_capture the budget
	// reserves when the configuration does not set
	// store.opened_captures: as many as fit beside the board's own ports.
	OpenedCaptures int    `toml:"opened_captures"`
	Span           Span   `toml:"span"`
	Gadget         Gadget `toml:"gadget"`
	GPIO           GPIO   `toml:"gpio"`
	Ports          []Port `toml:"port"`
}

// Span is the mirror-port interface prepared at start-up.
type Span struct {
	Interface string `toml:"interface"` // empty: the board has no SPAN port
}

// Gadget is the USB device-side network link an agent connects through.
type Gadget struct {
	Function  string `toml:"function"`  // "ncm" (ECM is the fallback), or empty for none
	Interface string `toml:"interface"` // the netdev the function creates, e.g. usb0
	Address   string `toml:"address"`   // static CIDR on the box side, e.g. 192.168.7.1/24
	UDC       string `toml:"udc"`       // controller name; empty picks the first one
}

// GPIO names the board's lines as "CHIP:OFFSET", where CHIP is a
// /dev/gpiochipN name or a chip label. An empty string means no such line.
type GPIO struct {
	StatusLED   string `toml:"status_led"`
	ActivityLED string `toml:"activity_led"`
	ArmedLED    string `toml:"armed_led"`
	ArmInput    string `toml:"arm_input"`
	// ArmActiveHigh flips the arm input's sense. Off by default: a key
	// switch pulls the line to ground, so a broken wire reads disarmed.
	ArmActiveHigh bool   `toml:"arm_active_high"`
	ArmPull       string `toml:"arm_pull"` // up (default), down or none
	// ConfirmInput is the confirm button beside the key switch, a
	// momentary push button (transmit.require_button waits for it).
	// Active low with a pull-up by default, like the arm input.
	ConfirmInput      string `toml:"confirm_input"`
	ConfirmActiveHigh bool   `toml:"confirm_active_high"`
	ConfirmPull       string `toml:"confirm_pull"` // up (default), down or none
}

// Names lists the embedded profiles, sorted.
func Names() []string {
	ents, _ := profileFS.ReadDir("profiles")
	var names []string
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(e.Name(), ".toml"))
	}
	sort.Strings(names)
	return names
}

// Load returns the embedded profile called name.
func Load(name string) (Profile, error) {
	b, err := profileFS.ReadFile(path.Join("profiles", name+".toml"))
	if err != nil {
		return Profile{}, fmt.Errorf("board %q: no such profile (have %s)", name, strings.Join(Names(), ", "))
	}
	return Parse(name, b)
}

// Parse decodes and checks one profile. An unknown key is an error, as in
// the configuration file.
func Parse(name string, b []byte) (Profile, error) {
	var p Profile
	md, err := toml.NewDecoder(bytes.NewReader(b)).Decode(&p)
	if err != nil {
		return p, fmt.Errorf("board %s: %w", name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return p, fmt.Errorf("board %s: unknown key %s", name, und[0])
	}
	if p.Name != name {
		return p, fmt.Errorf("board %s: profile says name %q", name, p.Name)
	}
	return p, p.check()
}

func (p Profile) check() error {
	if p.MemoryBudgetMiB < 0 {
		return fmt.Errorf("board %s: memory_budget_mib %d is negative", p.Name, p.MemoryBudgetMiB)
	}
	if p.OpenedCaptures < 0 {
		return fmt.Errorf("board %s: opened_captures %d is negative", p.Name, p.OpenedCaptures)
	}
	for _, s := range []struct{ role, spec string }{
		{"status_led", p.GPIO.StatusLED}, {"activity_led", p.GPIO.ActivityLED},
		{"armed_led", p.GPIO.ArmedLED}, {"arm_input", p.GPIO.ArmInput}, {"confirm_input", p.GPIO.ConfirmInput},
	} {
		if s.spec == "" {
			continue
		}
		if _, err := ParseLine(s.spec); err != nil {
			return fmt.Errorf("board %s: gpio.%s: %w", p.Name, s.role, err)
		}
	}
	if _, err := pullOf(p.GPIO.ArmPull); err != nil {
		return fmt.Errorf("board %s: gpio.arm_pull: %w", p.Name, err)
	}
	if _, err := pullOf(p.GPIO.ConfirmPull); err != nil {
		return fmt.Errorf("board %s: gpio.confirm_pull: %w", p.Name, err)
	}
	if l := p.GPIO.ConfirmInput; l != "" && l == p.GPIO.ArmInput {
		return fmt.Errorf("board %s: gpio.confirm_input %s is also the arm input: the button and the key switch need a line each", p.Name, l)
	}
	switch p.Gadget.Function {
	case "", "ncm", "ecm":
	default:
		return fmt.Errorf("board %s: gadget.function %q: want ncm or ecm", p.Name, p.Gadget.Function)
	}
	if p.Gadget.Function != "" && (p.Gadget.Interface == "" || p.Gadget.Address == "") {
		return fmt.Errorf("board %s: gadget needs interface and address", p.Name)
	}
	return nil
}

// MergePorts returns the profile's ports with the configuration's
// [[port]] tables applied: a table with a profile port's name replaces it,
// any other is added after the profile's.
func MergePorts(profile, configured []Port) []Port {
	byName := map[string]int{}
	out := append([]Port(nil), profile...)
	for i, p := range out {
		byName[p.Name] = i
	}
	for _, c := range configured {
		if i, ok := byName[c.Name]; ok {
			out[i] = c
			continue
		}
		out = append(out, c)
	}
	return out
}

// SplitCompiled separates ports whose driver this build has from those it
// lacks; the daemon reports the latter as skipped instead of failing, so a
// profile can name a port before its driver lands.
func SplitCompiled(ps []Port, drivers []string) (open, skipped []Port) {
	have := map[string]bool{}
	for _, d := range drivers {
		have[d] = true
	}
	for _, p := range ps {
		if have[p.Driver] {
			open = append(open, p)
		} else {
			skipped = append(skipped, p)
		}
	}
	return open, skipped
}
