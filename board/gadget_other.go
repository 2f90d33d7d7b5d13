//go:build !linux

package board

import "errors"

func setupGadget(Gadget) (string, error) { return "", errors.New("needs Linux configfs") }
