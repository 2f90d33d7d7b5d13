//go:build hwtest && linux

package board

import (
	"os"
	"testing"
)

// TestArmSwitchOnChip runs the arm-input contract on a kernel GPIO line
// through gpioioctl. hwtest builds this test for arm64 and runs it in the
// emulated board with FIELDTAP_ARM_LINE=gpiochip0:3 (the PL061 line QEMU
// pulses on system_powerdown).
func TestArmSwitchOnChip(t *testing.T) {
	spec := os.Getenv("FIELDTAP_ARM_LINE")
	if spec == "" {
		t.Skip("FIELDTAP_ARM_LINE (CHIP:OFFSET) not set")
	}
	l, err := ParseLine(spec)
	if err != nil {
		t.Fatal(err)
	}
	chips, err := OpenChips()
	if err != nil {
		t.Fatal(err)
	}
	p, err := chips.Line(l)
	if err != nil {
		t.Fatal(err)
	}
	testArmSwitch(t, p)
}
