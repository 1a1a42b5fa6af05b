package peek

import (
	"fmt"

	"github.com/retval/retval/pkg/retain"
)

// BytesPage is the result of Bytes.
type BytesPage struct {
	Start int64  `json:"start"` // the range asked for, half-open
	End   int64  `json:"end"`
	Size  int64  `json:"size"` // the value's size
	Data  []byte `json:"-"`    // bytes [Start, Start+len(Data))
	// Next is the byte range that continues, when the cap cut the page.
	Next   *Range `json:"next,omitempty"`
	escape bool
}

// Bytes reads the half-open byte range [start, end) of v within caps c.
// The range follows resolve's rules (CheckBytes): in bounds, and neither
// end inside a UTF-8 sequence. A range larger than the byte cap is cut at
// a UTF-8 boundary and names the range that continues. The page is held in
// memory; WriteBytes streams.
func Bytes(v *retain.Value, start, end int64, c Caps) (*BytesPage, error) {
	return bytesPage(sourceOf(v), start, end, c)
}

func bytesPage(src source, start, end int64, caps Caps) (*BytesPage, error) {
	c := caps.effective()
	p, stop, err := planBytes(src, start, end, c)
	if err != nil {
		return nil, err
	}
	p.Data = make([]byte, stop-start)
	if _, err := readFull(src, p.Data, start); err != nil {
		return nil, err
	}
	return p, nil
}

// planBytes checks [start, end) and returns its page without the data,
// and where the data shown stops.
func planBytes(src source, start, end int64, c capped) (*BytesPage, int64, error) {
	if err := checkBytes(src, start, end); err != nil {
		return nil, 0, err
	}
	p := &BytesPage{Start: start, End: end, Size: src.Size(), escape: c.Escape}
	stop := end
	if c.Bytes > 0 && (end-start > c.Bytes || c.Escape && end-start > c.Bytes/4) {
		reserve := int64(len(p.trailer(worstNumber(src.Size()))))
		if end-start <= c.Bytes {
			// Escaping may make it longer than the cap: measure it.
			w, err := shownLen(src, start, end, c)
			if err != nil {
				return nil, 0, err
			}
			if w <= c.Bytes {
				return p, stop, nil
			}
		}
		if need := reserve + c.minProgress(); c.Bytes < need {
			return nil, 0, tooSmall(c, need)
		}
		var err error
		if stop, err = fit(src, start, end, c.Bytes-reserve, c); err != nil {
			return nil, 0, err
		}
		p.Next = &Range{stop, end}
	}
	return p, stop, nil
}

// shownLen returns how many bytes [start, end) of src take as shown.
func shownLen(src source, start, end int64, c capped) (int64, error) {
	buf := make([]byte, end-start)
	if _, err := readFull(src, buf, start); err != nil {
		return 0, err
	}
	return c.shown(buf), nil
}

// Render returns the text of the page: the bytes as stored (or escaped,
// under Caps.Escape), then, when the cap cut them, the continuation line
// (after a newline of its own when the bytes do not end in one).
func (p *BytesPage) Render() []byte {
	b := appendText(nil, p.Data, p.escape)
	return appendTrailer(b, p.Trailer())
}

// Trailer returns "[bytes A-B of SIZE; next: --bytes B-C]" when the cap cut
// the page, "" otherwise.
func (p *BytesPage) Trailer() string {
	if p.Next == nil {
		return ""
	}
	return bytesTrailer(p.Start, p.Start+int64(len(p.Data)), p.Size, p.Next)
}

func bytesTrailer(a, b, size int64, next *Range) string {
	return fmt.Sprintf("[bytes %d-%d of %d; next: --bytes %d-%d]", a, b, size, next.First, next.Last)
}

func (p *BytesPage) trailer(w int64) string {
	return bytesTrailer(w, w, w, &Range{w, w}) + "\n\n"
}
