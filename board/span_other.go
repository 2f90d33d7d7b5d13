//go:build !linux

package board

import "errors"

func prepareSpan(string) error { return errors.New("needs Linux netlink") }
