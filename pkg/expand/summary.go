package expand

import "strconv"

// Summary returns the template as a later briefing keeps it: the expanded
// document with each $ref and $concat node replaced by
//
//	{"$expanded": {"bytes": N, "sha256": "<hex>"}}
//
// where N and the digest are those of the node's content before JSON
// escaping (see Expansion); a whole-value reference's digest is therefore
// the value's own. A $literal becomes its X, as in the output, and every
// other byte of the template is kept. Call it after WriteTo with Digests
// set.
func (p *Plan) Summary() []byte {
	src := p.t.Src
	var b []byte
	prev, k := 0, 0
	for _, n := range p.t.Nodes {
		b = append(b, src[prev:n.Start]...)
		prev = n.End
		if n.Kind == NodeLiteral {
			b = append(b, src[n.LitStart:n.LitEnd]...)
			continue
		}
		e := p.done[k]
		k++
		b = append(b, `{"$expanded": {"bytes": `...)
		b = strconv.AppendInt(b, e.Bytes, 10)
		b = append(b, `, "sha256": "`...)
		b = append(b, e.SHA256...)
		b = append(b, `"}}`...)
	}
	return append(b, src[prev:]...)
}
