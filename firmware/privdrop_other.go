//go:build !linux

package firmware

import (
	"context"
	"errors"
)

// RunAs needs Linux ambient capabilities.
func RunAs(context.Context, string, []string) (int, error) {
	return 0, errors.New("privilege drop needs Linux ambient capabilities")
}
