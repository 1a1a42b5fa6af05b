package expand

import (
	"github.com/retval/retval/internal/jsonscan"
	"github.com/retval/retval/pkg/retain"
)

// OutlineNode is one member or element an outline lists, as data: what a
// tree view of a JSON value (retval ui) shows for it and fetches when it
// is opened.
type OutlineNode struct {
	Pos int64 `json:"pos"` // position in its container, from 0
	// Name is a member's decoded name; NameCut: cut, too long to show
	// whole (Pointer is then empty: the cut name addresses nothing).
	Name    string `json:"name,omitempty"`
	NameCut bool   `json:"name_cut,omitempty"`
	// Pointer is the RFC 6901 pointer of the child.
	Pointer string `json:"pointer"`
	Kind    string `json:"kind"`
	// Start is the offset of the child's first byte in the value, Size
	// its length.
	Start int64 `json:"start"`
	Size  int64 `json:"size"`
	Count int64 `json:"count"` // members or elements of a container
	// Preview is the start of a scalar's lexeme; PreviewCut: only its
	// start.
	Preview    string `json:"preview,omitempty"`
	PreviewCut bool   `json:"preview_cut,omitempty"`
	// Dup: the member's name occurs more than once in its object, so a
	// pointer to it is ambiguous.
	Dup bool `json:"dup,omitempty"`
}

// OutlineNodes is the outline of one JSON value as data: the value
// itself, and for a container the first children from the reference's
// position and its last ones.
type OutlineNodes struct {
	Pointer    string        `json:"pointer"`
	Line       int64         `json:"line,omitempty"` // the NDJSON line, or 0
	Kind       string        `json:"kind"`
	Start      int64         `json:"start"`
	Size       int64         `json:"size"`
	Count      int64         `json:"count"`
	Preview    string        `json:"preview,omitempty"`
	PreviewCut bool          `json:"preview_cut,omitempty"`
	Head       []OutlineNode `json:"head"`
	// Tail are the last children, when not already in Head; Gap counts
	// the children between Head and Tail.
	Tail []OutlineNode `json:"tail"`
	Gap  int64         `json:"gap"`
}

// OutlineChildren outlines the value r (a RefOutline) selects in v as
// data: up to head children from r.From, then the last three. It reads
// the document as Outline does, in one pass, skipping nested containers.
func OutlineChildren(v *retain.Value, r Ref, head int) (*OutlineNodes, error) {
	if r.Kind != RefOutline {
		return nil, badRef("not an outline reference")
	}
	if err := r.checkDigest(&v.Desc); err != nil {
		return nil, err
	}
	src, start, end, err := document(v, r)
	if err != nil {
		return nil, err
	}
	head = min(max(head, 1), MaxOutlineLines)
	ol, err := findOutline(src, start, end, r.Pointer, jsonscan.OutlineOptions{
		After: r.From - 1, Head: head, Tail: tailShown, MaxName: 4096,
	}, chunkSize)
	if err != nil {
		return nil, err
	}
	ptr := r.Pointer.String()
	out := &OutlineNodes{Pointer: ptr, Line: r.Line, Kind: ol.Kind.String(), Start: ol.Start,
		Size: ol.End - ol.Start, Count: ol.Count, Preview: ol.Preview, PreviewCut: ol.PreviewCut,
		Head: []OutlineNode{}, Tail: []OutlineNode{}}
	obj := ol.Kind == KindObject
	node := func(c *jsonscan.Child) OutlineNode {
		n := OutlineNode{Pos: c.Pos, Kind: c.Kind.String(), Start: c.Start, Size: c.Size(), Count: c.Count,
			Preview: c.Preview, PreviewCut: c.PreviewCut, Dup: c.Dup}
		if obj {
			n.Name, n.NameCut = c.Name, c.NameCut
		}
		if !c.NameCut {
			n.Pointer = jsonscan.ChildPointer(ptr, obj, c)
		}
		return n
	}
	for i := range ol.Head {
		out.Head = append(out.Head, node(&ol.Head[i]))
	}
	next := r.From + int64(len(ol.Head))
	for i := range ol.Tail {
		if ol.Tail[i].Pos >= next {
			out.Tail = append(out.Tail, node(&ol.Tail[i]))
		}
	}
	if len(out.Tail) > 0 {
		out.Gap = out.Tail[0].Pos - next
	} else {
		out.Gap = max(ol.Count-next, 0)
	}
	return out, nil
}
