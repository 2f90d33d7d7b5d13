//go:build !linux

package board

import "errors"

// OpenChips fails off Linux: GPIO character devices are a Linux API.
func OpenChips() (Chip, error) { return nil, errors.New("gpio: needs Linux") }
