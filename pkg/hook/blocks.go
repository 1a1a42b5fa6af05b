package hook

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/retval/retval/internal/jsonstr"
)

// block is what the hook reads of an MCP content block.
type block struct {
	Type     string  `json:"type"`
	Text     *string `json:"text"`
	Resource *struct {
		Text *string `json:"text"`
		Blob *string `json:"blob"`
	} `json:"resource"`
}

// Blocks retains the text of an MCP tool result's content blocks, as the
// MCP proxy does: the value is the text of its text blocks and embedded
// text resources, in order, joined by newlines. The first of those blocks
// becomes one text block holding the stub (saying so when several were
// joined) and the others go; images, audio, resource links and blob
// resources stay where they are. nil and the reason when the text is
// shown as it is (small, no text, not retained).
func (h *Hook) Blocks(c Call, content []json.RawMessage) ([]json.RawMessage, *Kept, string, error) {
	var texts []string
	first := -1
	isText := make([]bool, len(content))
	for i, raw := range content {
		var b block
		if json.Unmarshal(raw, &b) != nil {
			continue
		}
		switch {
		case b.Type == "text" && b.Text != nil:
			texts = append(texts, *b.Text)
		case b.Type == "resource" && b.Resource != nil && b.Resource.Text != nil && b.Resource.Blob == nil:
			texts = append(texts, *b.Resource.Text)
		default:
			continue
		}
		isText[i] = true
		if first < 0 {
			first = i
		}
	}
	if first < 0 {
		return nil, nil, "no text in the result: shown as is", nil
	}
	note := ""
	if len(texts) > 1 {
		note = fmt.Sprintf("[the value is the result's %d text blocks joined by newlines]\n", len(texts))
	}
	kept, reason, err := h.Retain(strings.NewReader(strings.Join(texts, "\n")), Value{Call: c, Note: note})
	if kept == nil {
		return nil, nil, reason, err
	}
	stub, err := jsonstr.Marshal(map[string]string{"type": "text", "text": kept.Stub})
	if err != nil {
		return nil, nil, "", err
	}
	var out []json.RawMessage
	for i, raw := range content {
		switch {
		case i == first:
			out = append(out, stub)
		case !isText[i]:
			out = append(out, raw)
		}
	}
	return out, kept, "", nil
}
