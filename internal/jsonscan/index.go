package jsonscan

import "math/bits"

// The structural index: masks of the bytes of the current chunk that
// skipping looks at, 64 bytes to a block, built with vector instructions
// on first use as far as it is needed (indexStep bytes at a time). From
// the masks a block is skipped with a few word operations whatever it
// holds: the bytes inside strings are the prefix XOR of the unescaped
// quotes, and only the brackets and commas outside them are looked at one
// by one (simdjson's stage 1). Without the vector instructions the scanner
// searches for quotes and brackets a word at a time instead, which is
// faster than building the masks eight bytes at a time.

// blockMasks marks (bit k for byte k) the quotes, backslashes, brackets
// and commas of a block of 64 bytes. brack also marks 'Y', '_', 'y' and
// DEL, which share the brackets' bit pattern under c|0x26 == 0x7f and
// never occur outside a string in JSON: callers pass over them.
type blockMasks struct {
	quote, bslash, brack, comma uint64
}

// indexStep is how many bytes are classified at a time.
const indexStep = 4 << 10

// block returns the masks of the block j of the current chunk, bytes
// [64j, 64j+64); bytes past the chunk's end are in no mask.
func (s *Scanner) block(j int) *blockMasks {
	if j >= len(s.masks) {
		s.index(j)
	}
	return &s.masks[j]
}

// index classifies the chunk up to and including block j.
func (s *Scanner) index(j int) {
	from := len(s.masks) * 64
	to := min(len(s.buf), max(from+indexStep, 64*(j+1)))
	full := (to - from) / 64
	n := (to - from + 63) / 64
	if cap(s.masks)-len(s.masks) < n {
		m := make([]blockMasks, len(s.masks), max(2*cap(s.masks), len(s.masks)+n, (len(s.buf)+63)/64))
		copy(m, s.masks)
		s.masks = m
	}
	s.masks = s.masks[:len(s.masks)+n]
	out := s.masks[len(s.masks)-n:]
	classify(s.buf[from:from+64*full], out[:full])
	if full < n {
		var pad [64]byte
		copy(pad[:], s.buf[from+64*full:to])
		classify(pad[:], out[full:])
	}
}

// prefixXor sets bit k of m to the parity of bits 0 to k: for the quotes,
// the bytes from an opening quote up to the one before its closing quote.
func prefixXor(m uint64) uint64 {
	m ^= m << 1
	m ^= m << 2
	m ^= m << 4
	m ^= m << 8
	m ^= m << 16
	return m ^ m<<32
}

// escapes returns the bytes that a backslash escapes, given the
// backslashes of a word and whether its first byte is escaped by one
// before it (esc, 0 or 1); escape is the backslashes that escape the byte
// after them. An escaped backslash is in neither. (simdjson's
// json_escape_scanner: the odd runs of backslashes are told from the even
// ones by subtracting them from the odd bits.)
func escapes(bslash, esc uint64) (escaped, escape uint64) {
	const odd = 0xaaaaaaaaaaaaaaaa
	potential := bslash &^ esc
	code := ((potential<<1 | odd) - potential) ^ odd
	return code ^ (bslash | esc), code & bslash
}

// skipStringIndexed is SkipStringBody reading the structural index: the
// closing quote is the first quote that no backslash escapes.
func (s *Scanner) skipStringIndexed() error {
	var esc uint64 // 1: the next byte is escaped
	if s.escNext {
		esc, s.escNext = 1, false
	}
	i := s.pos
	for {
		if i >= len(s.buf) {
			s.pos = i
			ok, err := s.fill()
			if err != nil {
				s.escNext = esc != 0
				return err
			}
			if !ok {
				s.escNext = esc != 0
				return s.Syntax("unterminated string")
			}
			i = s.pos
		}
		j, off := i/64, uint(i%64)
		end := min(64*j+64, len(s.buf))
		m := s.block(j)
		q, bs := m.quote>>off, m.bslash>>off
		if bs|esc != 0 {
			escaped, escape := escapes(bs, esc)
			q &^= escaped
			esc = escape >> uint(end-i-1) & 1
		}
		if q != 0 {
			s.pos = i + bits.TrailingZeros64(q) + 1
			return nil
		}
		i = end
	}
}

// skipContainerIndexed is skipContainer reading the structural index a
// block at a time: the bytes inside strings are the prefix XOR of the
// unescaped quotes, and only the brackets (and, with count, commas)
// outside them are looked at one by one.
func (s *Scanner) skipContainerIndexed(open byte, count bool) error {
	depth := 0
	s.push(depth, open == '{')
	depth++
	var str uint64 // all ones while inside a string
	var esc uint64 // 1: the next byte is escaped
	i := s.pos
	for {
		if i >= len(s.buf) {
			s.pos = i
			ok, err := s.fill()
			if err != nil {
				return err
			}
			if !ok {
				if str != 0 {
					s.escNext = esc != 0 // as SkipStringBody leaves it
					return s.Syntax("unterminated string")
				}
				return s.Syntax("unexpected end of the document inside a container")
			}
			i = s.pos
		}
		// Bytes [i, end) of block j are bits 0 to n-1; the masks have no
		// bits past them.
		j, off := i/64, uint(i%64)
		end := min(64*j+64, len(s.buf))
		n := uint(end - i)
		m := s.block(j)
		q, st := m.quote>>off, m.brack>>off
		if count {
			st |= m.comma >> off
		}
		var in uint64
		if bs := m.bslash >> off; bs|esc == 0 {
			in = prefixXor(q) ^ str
			str = -(in >> (n - 1) & 1)
		} else {
			in, str, esc = inStrings(s.buf[i:end], q, bs, str, esc)
		}
		for st &^= in; st != 0; st &= st - 1 {
			k := i + bits.TrailingZeros64(st)
			switch c := s.buf[k]; c {
			case ',':
				if depth == 1 {
					s.commas++
				}
			case '{', '[':
				if depth >= MaxDepth {
					s.pos = k
					return s.Syntax("nesting deeper than %d levels", MaxDepth)
				}
				s.push(depth, c == '{')
				depth++
			case '}', ']':
				depth--
				if s.stack[depth/64]&(1<<(depth%64)) != 0 != (c == '}') {
					s.pos = k
					return s.Syntax("%q closes a container it did not open", c)
				}
				if depth == 0 {
					s.pos = k + 1
					return nil
				}
			}
		}
		i = end
	}
}

// inStrings marks the bytes of b (at most 64, with quotes q and
// backslashes bs) that are inside strings, given whether b starts inside
// one (str, all ones) after a backslash (esc, 1); it returns the state
// after b. A backslash outside a string, which JSON has not, is passed
// over, as SkipContainer does: such a block is followed a byte at a time.
func inStrings(b []byte, q, bs, str, esc uint64) (in, strAfter, escAfter uint64) {
	n := uint(len(b))
	escaped, escape := escapes(bs, esc)
	if in = prefixXor(q&^escaped) ^ str; bs&^in == 0 {
		return in, -(in >> (n - 1) & 1), escape >> (n - 1) & 1
	}
	in = 0
	for k, c := range b {
		switch {
		case str == 0:
			if c == '"' {
				str = ^uint64(0)
			}
		case esc != 0:
			esc = 0
		case c == '\\':
			esc = 1
		case c == '"':
			str = 0
		}
		in |= str & (1 << k)
	}
	return in, str, esc
}
