//go:build race

package sdp

// raceDetector: the race runtime adds to what each allocation takes from
// the heap, so a heap figure measured under it is above the size classes
// the charges are made of (by up to 2 % here).
const raceDetector = true
