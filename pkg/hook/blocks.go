package hook

import (
	"encoding/json"
	"strings"

	"github.com/retval/retval/internal/jsonstr"
	"github.com/retval/retval/internal/mcpresult"
)

// Blocks retains what is big in an MCP tool result's content blocks by
// the MCP proxy's own rule (internal/mcpresult): each text block or
// embedded text resource over the threshold becomes its stub, small ones
// stay; blocks small one by one but big together are joined into one
// value, the stub saying so; images, audio, links and blobs stay. nil and
// the reason when the content is shown as it is (small, no text, not
// retained). Kept is the first value retained.
func (h *Hook) Blocks(c Call, content []json.RawMessage) ([]json.RawMessage, *Kept, string, error) {
	res, err := jsonstr.Marshal(map[string]any{"content": content})
	if err != nil {
		return nil, nil, "", err
	}
	var first *Kept
	var failure error
	out := mcpresult.Rewrite(res, h.opts.Limits.Effective().Threshold, c.Tool, func(text, suffix, tool, note string) (string, bool) {
		kept, _, err := h.Retain(strings.NewReader(text), Value{Call: c, Suffix: suffix, Tool: tool, Note: note})
		if err != nil && failure == nil {
			failure = err
		}
		if kept == nil {
			return "", false
		}
		if first == nil {
			first = kept
		}
		return kept.Stub, true
	})
	if out == nil {
		if failure != nil {
			return nil, nil, "", failure
		}
		return nil, nil, "the content is within the threshold, or has no text: shown as is", nil
	}
	var m struct {
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, nil, "", err
	}
	return m.Content, first, "", nil
}
