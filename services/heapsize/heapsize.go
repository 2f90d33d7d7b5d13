package heapsize

// Size classes of the Go 1.26 allocator, in bytes
// (internal/runtime/gc.SizeClassToSize without the zero class).
var classes = [...]int{
	8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280,
	1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528,
	6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072,
	20480, 21760, 24576, 27264, 28672, 32768,
}

const (
	// maxSmall is the largest size-classed object; larger ones get pages.
	maxSmall = 32768
	// pageSize is the runtime's page (runtime/internal pageShift 13).
	pageSize = 8192
	// headerAbove: pointerful objects larger than this carry a malloc
	// header of headerBytes (runtime/mbitmap.go minSizeForMallocHeader).
	headerAbove = 512
	headerBytes = 8
)

// smallMax is the largest size small answers: every class up to it is a
// multiple of 8, so n rounded up to 8 indexes the table.
const smallMax = 1024

// small[i] is the class of an allocation of 8*i bytes (and of the 7 sizes
// below it).
var small = func() (t [smallMax/8 + 1]uint16) {
	c := 0
	for i := 1; i < len(t); i++ {
		for classes[c] < 8*i {
			c++
		}
		t[i] = uint16(classes[c])
	}
	return t
}()

// Bytes is the heap footprint of one pointer-free allocation of n bytes
// ([]byte, a string's bytes); 0 for n ≤ 0, which allocates nothing.
func Bytes(n int) int {
	if n <= 0 {
		return 0
	}
	if n <= smallMax {
		// Every message and every dialog update asks for a few of these:
		// one load, as the runtime's own size_to_class8 does.
		return int(small[(n+7)>>3])
	}
	if n > maxSmall {
		return (n + pageSize - 1) / pageSize * pageSize
	}
	lo, hi := 0, len(classes)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if classes[mid] < n {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return classes[lo]
}

// Pointers is the footprint of one allocation of n bytes that holds
// pointers (a struct with strings or slices, a slice of them).
func Pointers(n int) int {
	if n > headerAbove {
		n += headerBytes
	}
	return Bytes(n)
}

// String is the footprint of a string's bytes: none for "", since the
// runtime shares the empty string.
func String(s string) int { return Bytes(len(s)) }

// MapEntry bounds what one entry of a Go map costs: Go 1.24's swiss
// tables keep 8 slots per group with one control byte each, grow at 7/8
// full and double, so just after growth a table holds up to 2 slots per
// entry. keyValue is the size of the key plus the value; a slot pads it
// to 8 bytes. It is the worst case, so a bound built on it holds.
func MapEntry(keyValue int) int { return 2 * ((keyValue+7)&^7 + 1) }

// Appended is the footprint of the array a slice ends with after n
// appends of one elem-byte element each, from nil: the runtime's growth
// (runtime/slice.go nextslicecap: doubling below 256 elements, then about
// 1.25×) with each array rounded up to its size class, whose spare room
// becomes capacity, as growslice does.
func Appended(n, elem int, pointers bool) int {
	if n <= 0 || elem <= 0 {
		return 0
	}
	size := Bytes
	if pointers {
		size = Pointers
	}
	capacity := 0
	for capacity < n {
		next := capacity + 1 // the length that overflows the array
		newcap := 2 * capacity
		if next > newcap {
			newcap = next
		} else if capacity >= 256 {
			newcap = capacity
			for newcap < next {
				newcap += (newcap + 3*256) >> 2
			}
		}
		capacity = size(newcap*elem) / elem
	}
	return size(capacity * elem)
}
