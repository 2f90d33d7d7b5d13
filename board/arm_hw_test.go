//go:build hwtest && linux

package board

import (
	"os"
	"testing"

	"periph.io/x/conn/v3/gpio"
)

// chipLine opens the kernel GPIO line named by env (CHIP:OFFSET) through
// gpioioctl, or skips.
func chipLine(t *testing.T, env string) gpio.PinIO {
	t.Helper()
	spec := os.Getenv(env)
	if spec == "" {
		t.Skip(env + " (CHIP:OFFSET) not set")
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
	return p
}

// TestArmSwitchOnChip runs the arm-input contract on a kernel GPIO line
// through gpioioctl. hwtest builds this test for arm64 and runs it in the
// emulated board with FIELDTAP_ARM_LINE=gpiochip0:4 (the PL061 line the
// host holds through QEMU's qtest socket).
func TestArmSwitchOnChip(t *testing.T) {
	testArmSwitch(t, chipLine(t, "FIELDTAP_ARM_LINE"))
}

// TestConfirmButtonOnChip runs the confirm-button contract on a kernel
// GPIO line: FIELDTAP_CONFIRM_LINE=gpiochip0:3 in the emulated board (the
// PL061 line QEMU pulses on system_powerdown).
func TestConfirmButtonOnChip(t *testing.T) {
	testConfirmButton(t, chipLine(t, "FIELDTAP_CONFIRM_LINE"))
}
