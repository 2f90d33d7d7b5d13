package j1587

import "strconv"

// formatBasis says what a rate was computed from.
func formatBasis(n uint64, span float64) string {
	return strconv.FormatUint(n, 10) + " messages over " + strconv.FormatFloat(span, 'f', 3, 64) + " s"
}
