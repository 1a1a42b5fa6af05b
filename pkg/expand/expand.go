package expand

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"sort"

	"github.com/retval/retval/internal/jsonstr"
	"github.com/retval/retval/pkg/retain"
)

// Expander expands templates against one run of a store. Expansion
// composes content for a tool call that the model does not read, so it
// spends no lookup budget; its bound is MaxBytes of expanded content.
type Expander struct {
	Store *retain.Store
	Run   string
	// MaxBytes bounds the expanded content of one expansion: the sum, over
	// the template's $ref and $concat nodes, of the bytes of their text
	// before JSON escaping (what Expansion.Bytes counts). 0 means SPEC's
	// default, 16 MiB (retain.DefaultLimits); retain.Unlimited (any
	// negative value), no bound.
	MaxBytes int64
}

// maxBytes is the bound MaxBytes sets, 0 meaning none.
func (x *Expander) maxBytes() int64 {
	return retain.Limits{MaxExpandBytes: x.MaxBytes}.Effective().MaxExpandBytes
}

// Expansion is what one $ref or $concat node expanded to: its content's
// length and SHA-256, both of the text before JSON escaping (the selected
// bytes as stored, the decoded text of an "as": "string" selection, the
// lexeme of an "as": "value" one, a $concat's parts joined).
type Expansion struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256,omitempty"`
}

// Plan is a template whose every reference has been found in its value and
// whose expanded size is known and within bounds: writing it can only fail
// on I/O, a corrupt value, or a selection that a JSON string cannot carry
// (not valid UTF-8, see NotUTF8Error), which is found as its bytes stream
// by. Close it when done.
type Plan struct {
	t *Template
	// sels[i][j] is the selection of part j of node i (nil for text).
	sels [][]*Selection
	// size[i] is the exact content length of node i, or -1 where it holds
	// a decoded string whose length has not been needed.
	size   []int64
	values map[string]*retain.Value
	errs   map[string]error

	// Digests makes WriteTo hash each node's content, for Summary.
	Digests bool
	done    []Expansion
	// composed is the bytes each value gave the output (by the id its
	// references name), for the read log.
	composed map[string]int64
}

// Plan finds every reference of t in the run, checks that all of them
// resolve and that the expansion stays within MaxBytes, and returns the
// plan of the expansion. Any failure — a malformed node of t, a reference
// that does not resolve, the bound — refuses the whole template: the error
// has code expand_refused and carries a Refusal listing every failure
// with its path. Each value is opened once, however many references name
// it.
func (x *Expander) Plan(t *Template) (*Plan, error) {
	p := &Plan{t: t, values: map[string]*retain.Value{}, errs: map[string]error{}}
	fails := append([]Failure(nil), t.Failures...)
	p.sels = make([][]*Selection, len(t.Nodes))
	lines := map[*retain.Value][]lineRef{}
	var order []*retain.Value
	for i, n := range t.Nodes {
		p.sels[i] = make([]*Selection, len(n.Parts))
		for j, part := range n.Parts {
			if !part.IsRef {
				continue
			}
			v, err := p.open(x, part.Ref.ID)
			if err == nil && batchable(v, part.Ref) {
				if lines[v] == nil {
					order = append(order, v)
				}
				lines[v] = append(lines[v], lineRef{node: i, part: j, ref: part.Ref})
				continue
			}
			var s *Selection
			if err == nil {
				s, err = Select(v, part.Ref)
			}
			if err != nil {
				fails = append(fails, failure(part.at, part.Path, err))
				continue
			}
			p.sels[i][j] = s
		}
	}
	for _, part := range t.orphans {
		v, err := p.open(x, part.Ref.ID)
		if err == nil {
			_, err = Select(v, part.Ref)
		}
		if err != nil {
			fails = append(fails, failure(part.at, part.Path, err))
		}
	}
	for _, v := range order {
		if err := p.locateLines(v, lines[v]); err != nil {
			for _, lr := range lines[v] {
				part := t.Nodes[lr.node].Parts[lr.part]
				fails = append(fails, failure(part.at, part.Path, err))
			}
		}
	}
	if len(fails) == 0 {
		fails = p.sizes(x.maxBytes())
	} else {
		// Refused already: name the selections that are not UTF-8 too,
		// which WriteTo would otherwise find, so that one refusal lists
		// every failing node.
		fails = append(fails, p.scanText(x.maxBytes())...)
	}
	if len(fails) > 0 {
		sortFailures(fails)
		p.Close()
		return nil, refuse(fails)
	}
	return p, nil
}

// open opens the value id names, once per expansion.
func (p *Plan) open(x *Expander, id string) (*retain.Value, error) {
	id = valueID(id)
	if err, ok := p.errs[id]; ok {
		return nil, err
	}
	if v, ok := p.values[id]; ok {
		return v, nil
	}
	v, err := x.Store.OpenValue(x.Run, id)
	if err != nil {
		p.errs[id] = err
		return nil, err
	}
	p.values[id] = v
	return v, nil
}

// sortFailures puts failures in the order of the template: malformed
// nodes and failing references are found separately.
func sortFailures(f []Failure) {
	sort.SliceStable(f, func(i, j int) bool { return f[i].at < f[j].at })
}

// Close closes the plan's values.
func (p *Plan) Close() error {
	for _, v := range p.values {
		v.Close()
	}
	p.values = nil
	return nil
}

// sizes works out each node's content length and checks the bound before
// anything is written. The length of a decoded string is known only by
// decoding it, so it is first bounded (its text is at least a sixth and at
// most three times its escaped body) and decoded only when the bounds
// cannot decide.
func (p *Plan) sizes(limit int64) []Failure {
	t := p.t
	p.size = make([]int64, len(t.Nodes))
	lo, hi := make([]int64, len(t.Nodes)), make([]int64, len(t.Nodes))
	var sumLo, sumHi int64
	for i, n := range t.Nodes {
		if n.Kind == NodeLiteral {
			continue
		}
		for j, part := range n.Parts {
			s := p.sels[i][j]
			switch {
			case !part.IsRef:
				lo[i] += int64(len(part.Text))
				hi[i] += int64(len(part.Text))
			case s.Decoded():
				body := s.Size() - 2
				lo[i] += body / 6
				hi[i] += 3 * body
			default:
				lo[i] += s.Size()
				hi[i] += s.Size()
			}
		}
		sumLo += lo[i]
		sumHi += hi[i]
	}
	exact := sumLo == sumHi
	if !exact && limit > 0 && sumLo <= limit && sumHi > limit {
		// Decode what the bounds could not decide.
		for i, n := range t.Nodes {
			if lo[i] == hi[i] {
				continue
			}
			var total int64
			for j, part := range n.Parts {
				s := p.sels[i][j]
				switch {
				case !part.IsRef:
					total += int64(len(part.Text))
				case s.Decoded():
					k, err := s.WriteTo(io.Discard)
					if err != nil {
						return []Failure{failure(part.at, part.Path, err)}
					}
					total += k
				default:
					total += s.Size()
				}
			}
			lo[i], hi[i] = total, total
		}
		exact = true
	}
	var run int64
	for i, n := range t.Nodes {
		if n.Kind == NodeLiteral {
			continue
		}
		run += lo[i]
		if limit > 0 && run > limit {
			total, least := sumLo, "at least "
			if exact {
				total, least = run, ""
				for _, l := range lo[i+1:] {
					total += l
				}
			}
			return []Failure{failure(n.Start, n.Path, retain.Errorf(retain.CodeTooLarge,
				"the expanded content passes the %d-byte bound of one expansion at this node (%s%d bytes in all); expand in smaller steps, or raise --max-expand-bytes", limit, least, total))}
		}
		p.size[i] = -1
		if lo[i] == hi[i] {
			p.size[i] = lo[i]
		}
	}
	return nil
}

// scanText checks the selections that can fail to be UTF-8 — of values
// whose descriptor says they are not, and decoded strings (a lone
// surrogate escape) — reading at most about limit bytes (0: no limit),
// and returns those that fail.
func (p *Plan) scanText(limit int64) []Failure {
	var fails []Failure
	var read int64
	for i, n := range p.t.Nodes {
		for j, part := range n.Parts {
			s := p.sels[i][j]
			if s == nil || !s.Decoded() && s.Value.Desc.UTF8 {
				continue
			}
			if read += s.Size(); limit > 0 && read > limit {
				return fails
			}
			scan := s.scanner()
			_, err := s.writeTo(io.Discard, scan)
			if err == nil {
				err = scan.err()
			}
			if err != nil {
				fails = append(fails, failure(part.at, part.Path, err))
			}
		}
	}
	return fails
}

// Size is the expanded content's length, as MaxBytes counts it, when every
// node's length is known before writing; else -1.
func (p *Plan) Size() int64 {
	var n int64
	for i, s := range p.size {
		if p.t.Nodes[i].Kind == NodeLiteral {
			continue
		}
		if s < 0 {
			return -1
		}
		n += s
	}
	return n
}

// WriteTo writes the expanded document to w: the template's bytes, with
// each node replaced by its expansion. Selections stream from their values
// into the JSON-escaped output; nothing is built whole in memory. Every
// byte put into the output is checked to be UTF-8 on its way (a JSON
// string holds text; so does the output, where a lexeme goes as it is). A
// part that fails — its value does not read (a corrupt block), or it is
// not valid UTF-8 — ends the output there, so w never holds a replaced
// byte; the remaining parts are still read and checked, and the refusal
// names every part that failed. w then holds part of the document. Expand,
// which writes to memory first, never shows that part.
func (p *Plan) WriteTo(w io.Writer) (int64, error) {
	out := &outWriter{w: w}
	src := p.t.Src
	prev := 0
	buf := make([]byte, copyChunk)
	p.done = p.done[:0]
	p.composed = map[string]int64{}
	var fails []Failure
	var h hash.Hash
	if p.Digests {
		h = sha256.New()
	}
	for i, n := range p.t.Nodes {
		out.Write(src[prev:n.Start])
		prev = n.End
		if n.Kind == NodeLiteral {
			out.Write(src[n.LitStart:n.LitEnd])
			continue
		}
		c := &content{h: h}
		if h != nil {
			h.Reset()
		}
		var jw *jsonstr.Writer
		if n.Kind == NodeRef && n.Parts[0].Ref.As == AsValue {
			c.w = out
		} else {
			jw = &jsonstr.Writer{W: out}
			c.w = jw
			out.Write([]byte{'"'})
		}
		for j, part := range n.Parts {
			var err error
			before := c.n
			switch s := p.sels[i][j]; {
			case !part.IsRef:
				_, err = c.Write(part.Text) // checked when the template was read
			default:
				scan := s.scanner()
				scan.onBad = out.stop
				if s.Decoded() {
					_, err = s.writeTo(c, scan)
				} else {
					err = copySelection(c, s, buf, scan)
				}
				if err == nil {
					err = scan.err()
				}
			}
			if part.IsRef {
				p.composed[part.Ref.ID] += c.n - before
			}
			if out.err != nil {
				return out.n, out.err
			}
			if err != nil {
				out.stop()
				fails = append(fails, failure(part.at, part.Path, err))
			}
		}
		if jw != nil {
			jw.Close()
			out.Write([]byte{'"'})
		}
		e := Expansion{Path: n.Path, Bytes: c.n}
		if h != nil {
			e.SHA256 = hex.EncodeToString(h.Sum(nil))
		}
		p.done = append(p.done, e)
	}
	out.Write(src[prev:])
	if len(fails) > 0 {
		return out.n, refuse(fails)
	}
	return out.n, out.err
}

// Expansions returns what each $ref and $concat node expanded to, in
// document order, after WriteTo (with their SHA-256 when Digests was set).
func (p *Plan) Expansions() []Expansion { return p.done }

// copyChunk is how much of a value is read at a time: one verified block.
const copyChunk = retain.BlockSize

// copySelection streams the selected bytes of s to w through buf,
// showing each piece to scan before w.
func copySelection(w io.Writer, s *Selection, buf []byte, scan *utf8Scan) error {
	for off := s.Start; off < s.End; {
		n := min(int64(len(buf)), s.End-off)
		k, err := s.Value.ReadAt(buf[:n], off)
		if int64(k) < n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		scan.Write(buf[:n])
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// content counts (and hashes) a node's text on its way to w.
type content struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (c *content) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	if c.h != nil {
		c.h.Write(p)
	}
	return c.w.Write(p)
}

// outWriter writes the output, keeping the first error so that a failure
// of the output is told apart from a failure to read a value. Once
// stopped, it writes nothing more.
type outWriter struct {
	w       io.Writer
	n       int64
	err     error
	stopped bool
}

// stop ends the output: a part failed, and nothing after it is written.
func (o *outWriter) stop() { o.stopped = true }

func (o *outWriter) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	if o.stopped {
		return len(p), nil
	}
	n, err := o.w.Write(p)
	o.n += int64(n)
	o.err = err
	return n, err
}

// Result is a finished expansion.
type Result struct {
	out buffer
	// Expansions are the $ref and $concat nodes, in document order.
	Expansions []Expansion
	// Summary is the template with each $ref and $concat node replaced by
	// {"$expanded": {"bytes": N, "sha256": "..."}}; nil unless asked for.
	Summary []byte
}

// Len is the length of the expanded document.
func (r *Result) Len() int64 { return r.out.n }

// WriteTo writes the expanded document to w.
func (r *Result) WriteTo(w io.Writer) (int64, error) { return r.out.WriteTo(w) }

// Bytes returns the expanded document in one slice (a copy).
func (r *Result) Bytes() []byte {
	b := make([]byte, 0, r.out.n)
	for _, c := range r.out.chunks {
		b = append(b, c...)
	}
	return b
}

// Expand expands the template src, all or nothing: it parses src, plans
// the expansion (every failure refuses it, see Plan), and writes the
// output to memory, so a caller has either the whole document or an error
// and nothing. With summary, it also hashes each node's content and
// returns the summary document. The output is held in chunks of 1 MiB, so
// memory stays within a chunk of its size, however much escaping adds.
func (x *Expander) Expand(src []byte, summary bool) (*Result, error) {
	t, err := ParseTemplate(src)
	if err != nil {
		return nil, err
	}
	p, err := x.Plan(t)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	p.Digests = summary
	r := &Result{}
	if _, err := p.WriteTo(&r.out); err != nil {
		return nil, err
	}
	x.logComposed(p.composed)
	r.Expansions = p.Expansions()
	if summary {
		r.Summary = p.Summary()
	}
	return r, nil
}

// bufChunk is the size of the chunks an expansion is held in.
const bufChunk = 1 << 20

// buffer holds output in chunks: growing never copies what it holds.
type buffer struct {
	chunks [][]byte
	n      int64
}

func (b *buffer) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if len(b.chunks) == 0 || len(b.chunks[len(b.chunks)-1]) == bufChunk {
			b.chunks = append(b.chunks, make([]byte, 0, bufChunk))
		}
		last := &b.chunks[len(b.chunks)-1]
		k := min(len(p), bufChunk-len(*last))
		*last = append(*last, p[:k]...)
		p = p[k:]
	}
	b.n += int64(n)
	return n, nil
}

func (b *buffer) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, c := range b.chunks {
		k, err := w.Write(c)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
