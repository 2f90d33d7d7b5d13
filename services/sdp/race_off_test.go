//go:build !race

package sdp

const raceDetector = false
