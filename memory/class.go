package memory

// Class is a traffic class: which operand of a GEMM a transfer carries.
// Every byte the hierarchy moves is accounted to one class.
type Class int

// The traffic classes of a (sparse) GEMM.
const (
	AValues  Class = iota // A operand values (compressed when sparse)
	AMeta                 // 2:4 metadata of A
	BOperand              // B operand
	CRead                 // C read in the epilogue (beta != 0)
	DWrite                // D written by the epilogue
	NumClasses
)

var classNames = [NumClasses]string{"a_values", "a_metadata", "b",
	"c_read", "d_write"}

// String is the class's name in results ("a_values", "a_metadata", "b",
// "c_read", "d_write").
func (c Class) String() string {
	if c < 0 || c >= NumClasses {
		return "unknown"
	}
	return classNames[c]
}

// Region is a 2-D tile of global memory: Rows rows of RowBytes bytes,
// Pitch bytes apart, the first starting at Base.
type Region struct {
	Base     uint64
	Rows     int
	RowBytes int
	Pitch    uint64
}

// Bytes is the region's size.
func (r Region) Bytes() uint64 { return uint64(r.Rows) * uint64(r.RowBytes) }

// lineSpan is the part of one cache line a region touches: the line's
// index (address / line size) and a mask of the sectors touched.
type lineSpan struct {
	line uint64
	mask uint64
}

// forEachLine calls fn for every (line, sector mask) a region touches,
// rows in order, lines in address order within a row. A line touched by
// two rows (pitch smaller than a line) is reported once per row.
func (r Region) forEachLine(lineBytes, sectorBytes uint64, fn func(lineSpan)) {
	w := r.lines(lineBytes, sectorBytes)
	for s, ok := w.next(); ok; s, ok = w.next() {
		fn(s)
	}
}

// lineWalk steps through the pieces forEachLine reports, in its order,
// without a callback (the fast hierarchy's loop over a request's lines).
type lineWalk struct {
	r                      Region
	lineBytes, sectorBytes uint64
	row                    int    // the current row
	a, end                 uint64 // its next address and its end
}

func (r Region) lines(lineBytes, sectorBytes uint64) lineWalk {
	return lineWalk{r: r, lineBytes: lineBytes, sectorBytes: sectorBytes, row: -1}
}

// next is the next piece (false: none left).
func (w *lineWalk) next() (lineSpan, bool) {
	for w.a >= w.end {
		w.row++
		if w.row >= w.r.Rows {
			return lineSpan{}, false
		}
		w.a = w.r.Base + uint64(w.row)*w.r.Pitch
		w.end = w.a + uint64(w.r.RowBytes)
	}
	a := w.a
	line := a / w.lineBytes
	stop := min(w.end, (line+1)*w.lineBytes)
	first := (a - line*w.lineBytes) / w.sectorBytes
	last := (stop - 1 - line*w.lineBytes) / w.sectorBytes
	w.a = stop
	return lineSpan{line: line, mask: sectorRange(first, last)}, true
}

// forEachRowSpan calls fn for the same pieces as forEachLine, in the same
// order, as (row, byte range within the row).
func (r Region) forEachRowSpan(lineBytes uint64, fn func(row, from, to int)) {
	for row := 0; row < r.Rows; row++ {
		r.rowLines(row, lineBytes, fn)
	}
}

// rowLines cuts one row into its pieces of whole lines.
func (r Region) rowLines(row int, lineBytes uint64, fn func(row, from, to int)) {
	start := r.Base + uint64(row)*r.Pitch
	end := start + uint64(r.RowBytes)
	for a := start; a < end; {
		stop := min(end, (a/lineBytes+1)*lineBytes)
		fn(row, int(a-start), int(stop-start))
		a = stop
	}
}

// sectorRange is a mask with bits first..last set.
func sectorRange(first, last uint64) uint64 {
	n := last - first + 1
	if n >= 64 {
		return ^uint64(0)
	}
	return ((uint64(1) << n) - 1) << first
}
