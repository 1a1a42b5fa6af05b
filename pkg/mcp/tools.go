// Package mcp brings retention to MCP clients: a relay that stands between
// a client and an MCP server, retains big tools/call results through
// pkg/retain and shows the model their stubs (Proxy), and retval's own
// tools, retval_peek, retval_resolve and retval_list, with which the model
// reads the values back (Tools, offered alone by Serve).
package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/retval/retval/pkg/expand"
	"github.com/retval/retval/pkg/peek"
	"github.com/retval/retval/pkg/retain"
)

// The names of retval's tools.
const (
	ToolPeek    = "retval_peek"
	ToolResolve = "retval_resolve"
	ToolList    = "retval_list"
)

// IsOwnTool reports whether name is one of retval's tools.
func IsOwnTool(name string) bool {
	return name == ToolPeek || name == ToolResolve || name == ToolList
}

// ToolPeekBytes is retval_peek's page size where peek-bytes is not set:
// below the default 16 KiB, because clients cut a tool result before the
// model sees it (Codex at about 12 KB, dropping the middle of a longer
// page). An explicit peek-bytes applies as it is.
const ToolPeekBytes = 8 << 10

// Tools answers retval's tools against one store. The zero Limits are the
// defaults.
type Tools struct {
	Store *retain.Store
	// Run is the run a call reads when it names none; "" makes the run
	// argument required.
	Run    string
	Limits retain.Limits
	// PeekBytesSet says peek-bytes was set explicitly (see peek.CapsFor).
	PeekBytesSet bool
}

const stubHelp = `A stub stands for a result too big to show: its first line is "[retained #ID] N bytes, L lines, sha256:..., complete", then the first and last lines of the result, and its last line names what to read next, e.g. "[read more: peek ID --lines 18-417 | --query TEXT]".`

const peekDescription = stubHelp + `

retval_peek reads part of a retained value the way you read a file. Each line comes with the gutter "N: " (its number, a colon, a space); drop it when you quote the line in an edit. Give id (the ID after "#" in the stub) and at most one of:
- lines: "A-B", inclusive 1-based (from "peek ID --lines A-B");
- query: text to search for, each matching line shown (with regex: an RE2 expression matched within a line; ignore_case; context: lines around each match; after_line: only matches after that line);
- bytes: "A-B", a half-open byte range;
- outline: an RFC 6901 pointer into a JSON value ("" the whole document, as in "peek ID --outline /a"): its members, one per line with the pointer that selects each, its type, size and count; after: list from the position after this one (the paging of an outline); with lines "N", the document on line N of an NDJSON value.
Without any, it shows the value from line 1. A page that stops early ends with a line naming how to go on: "next: --lines 401-800" means lines "401-800", "next: --after-line 913" means after_line 913, "--bytes A-B" means bytes "A-B", "next: --outline /a --after 19" means outline "/a" and after 19. Errors come back as a result marked isError with the error code in parentheses, e.g. (invalid_range); the message says what to do.`

const resolveDescription = stubHelp + `

retval_resolve returns exact selections of retained values, for quoting or checking. Give ref, one reference, or refs, an array of them (answered together as a JSON array of {"ok":true,"text":...} or {"ok":false,"error":{"code":...,"message":...}}). A reference is a JSON object: {"$ref":"ID"} the whole value, with "lines":[A,B] (inclusive, 1-based) or "bytes":[A,B] (half-open) or "pointer":"/a/0" (RFC 6901, in a JSON value; "as":"string" returns a string's decoded text), and optionally "sha256" the value must have. {"$list_results":N} is a page of the run's values from value N. One call is one step of the lookup budget (a few lookups of a few KiB each); prefer retval_peek to read around.`

const listDescription = `retval_list shows the values retained in the run, a page at a time: {"run":..., "page":N, "total":T, "next":M|null, "values":[{"id","tool","size","lines","complete","created","sha256"}, ...]}. Give page (0 first, then the "next" of the page before) to go on. Read a value with retval_peek using its id.`

// runProperty is the optional run argument of every tool.
const runProperty = `"run":{"type":"string","description":"the run the value is in; by default the server's own run"}`

// Tool is a tool's definition as tools/list shows it. Its JSON is the MCP
// wire form, field for field in the order the reference SDK writes it:
// retval speaks the protocol itself rather than link the SDK (and its
// JSON-schema and HTTP machinery) into every process.
type Tool struct {
	Annotations *ToolAnnotations `json:"annotations,omitempty"`
	Description string           `json:"description,omitempty"`
	InputSchema json.RawMessage  `json:"inputSchema"`
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
}

// ToolAnnotations are a tool's hints to the client.
type ToolAnnotations struct {
	IdempotentHint bool  `json:"idempotentHint"`
	OpenWorldHint  *bool `json:"openWorldHint,omitempty"`
	ReadOnlyHint   bool  `json:"readOnlyHint"`
}

// CallToolResult is the result of a tools/call.
type CallToolResult struct {
	Content []TextContent `json:"content"`
	IsError bool          `json:"isError,omitempty"`
}

// TextContent is a text block of a tool result.
type TextContent struct {
	Text string
}

// MarshalJSON writes the block as the wire has it, {"type":"text","text":...}.
func (c TextContent) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{"text", c.Text})
}

// Defs returns retval's tool definitions, as tools/list shows them.
func (t *Tools) Defs() []*Tool {
	required := func(names ...string) string {
		if t.Run == "" {
			names = append(names, "run")
		}
		if len(names) == 0 {
			return ""
		}
		b, _ := json.Marshal(names)
		return `,"required":` + string(b)
	}
	schema := func(props, req string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{` + props + `,` + runProperty + `}` + req + `,"additionalProperties":false}`)
	}
	ro := &ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(bool)}
	return []*Tool{
		{
			Name: ToolPeek, Title: "Read a retained value", Description: peekDescription, Annotations: ro,
			InputSchema: schema(`"id":{"type":"string","description":"the value id, the ID of #ID in the stub"},`+
				`"lines":{"type":"string","description":"inclusive 1-based line range A-B; also N (one line), N- (to the end), -N (the last N); with query, the lines searched"},`+
				`"query":{"type":"string","description":"show the lines holding this text"},`+
				`"regex":{"type":"boolean","description":"query is an RE2 expression, matched within each line"},`+
				`"ignore_case":{"type":"boolean","description":"match the query regardless of case"},`+
				`"context":{"type":"integer","minimum":0,"description":"lines shown before and after each match"},`+
				`"after_line":{"type":"integer","minimum":0,"description":"show only matches after this line (the paging of a query)"},`+
				`"bytes":{"type":"string","description":"half-open byte range A-B; also N- (to the end), -N (the last N)"},`+
				`"outline":{"type":"string","description":"list the members of the JSON value at this RFC 6901 pointer (\"\" for the whole document)"},`+
				`"after":{"type":"integer","minimum":0,"description":"with outline: list from the position after this one (the paging of an outline)"}`, required("id")),
		},
		{
			Name: ToolResolve, Title: "Resolve references to retained values", Description: resolveDescription, Annotations: ro,
			InputSchema: schema(`"ref":{"type":"object","description":"one reference, e.g. {\"$ref\":\"ID\",\"lines\":[10,20]}"},`+
				`"refs":{"type":"array","items":{"type":"object"},"description":"several references, answered as a JSON array"}`, required()),
		},
		{
			Name: ToolList, Title: "List retained values", Description: listDescription, Annotations: ro,
			InputSchema: schema(`"page":{"type":"integer","minimum":0,"description":"the value the page starts at: 0, then the next of the page before"}`, required()),
		},
	}
}

// Call answers one tools/call of a retval tool. Anything that goes wrong
// is a result with IsError set, whose text carries the error code in
// parentheses; Call never fails.
func (t *Tools) Call(name string, args json.RawMessage) *CallToolResult {
	var text []byte
	var err error
	switch name {
	case ToolPeek:
		text, err = t.peek(args)
	case ToolResolve:
		text, err = t.resolve(args)
	case ToolList:
		text, err = t.list(args)
	default:
		err = retain.Errorf(retain.CodeUsage, "unknown tool %q: retval's tools are %s, %s and %s", name, ToolPeek, ToolResolve, ToolList)
	}
	if err != nil {
		return ErrorResult(name, err)
	}
	return &CallToolResult{Content: []TextContent{{Text: string(text)}}}
}

// ErrorResult is the tool result of err: isError, and one text block
// "TOOL: MESSAGE (CODE)".
func ErrorResult(tool string, err error) *CallToolResult {
	msg := err.Error()
	var oe *peek.OptionError
	if errors.As(err, &oe) {
		// Name the tool's own arguments, not the CLI's flags.
		msg = oe.Render(func(o string) string { return strings.ReplaceAll(o, "-", "_") })
	}
	msg = strings.Join(strings.Fields(msg), " ")
	return &CallToolResult{IsError: true, Content: []TextContent{{
		Text: fmt.Sprintf("%s: %s (%s)", tool, msg, retain.CodeOf(err)),
	}}}
}

// decodeArgs decodes a call's arguments into v, refusing unknown names.
func decodeArgs(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return retain.Errorf(retain.CodeUsage, "bad arguments: %v; see the tool's input schema", err)
	}
	return nil
}

func (t *Tools) run(given string) (string, error) {
	if given != "" {
		return given, nil
	}
	if t.Run == "" {
		return "", retain.Errorf(retain.CodeUsage, "no run given: pass run, the run the value was retained in")
	}
	return t.Run, nil
}

type peekArgs struct {
	Run        string  `json:"run"`
	ID         string  `json:"id"`
	Lines      *string `json:"lines"`
	Query      *string `json:"query"`
	Regex      bool    `json:"regex"`
	IgnoreCase bool    `json:"ignore_case"`
	Context    *int64  `json:"context"`
	AfterLine  *int64  `json:"after_line"`
	Bytes      *string `json:"bytes"`
	Outline    *string `json:"outline"`
	After      *int64  `json:"after"`
}

func (t *Tools) peek(raw json.RawMessage) (text []byte, err error) {
	var a peekArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.ID == "" {
		return nil, retain.Errorf(retain.CodeUsage, "no id given: pass id, the ID after \"#\" in the stub")
	}
	if a.Outline != nil && (a.Query != nil || a.Bytes != nil) {
		return nil, retain.Errorf(retain.CodeUsage, "outline cannot be combined with query or bytes (lines \"N\" names the NDJSON line to outline)")
	}
	if a.After != nil && a.Outline == nil {
		return nil, retain.Errorf(retain.CodeUsage, "after pages through an outline: add outline")
	}
	n := 0
	for _, set := range []bool{a.Lines != nil && a.Outline == nil, a.Query != nil, a.Bytes != nil} {
		if set {
			n++
		}
	}
	if n > 1 && !(n == 2 && a.Lines != nil && a.Query != nil) {
		return nil, retain.Errorf(retain.CodeUsage, "lines, query and bytes cannot be combined: give one of them (lines with query searches within those lines)")
	}
	if a.Query == nil && (a.Regex || a.IgnoreCase || a.Context != nil || a.AfterLine != nil) {
		return nil, retain.Errorf(retain.CodeUsage, "regex, ignore_case, context and after_line only apply to a search: add query")
	}
	run, err := t.run(a.Run)
	if err != nil {
		return nil, err
	}
	// The page, or the error, is accounted for in the run's read log.
	defer func() { t.Store.LogCall(run, a.ID, ToolPeek, int64(len(text)), err) }()
	caps, err := peek.CapsFor(t.Limits, t.PeekBytesSet)
	if err != nil {
		return nil, err
	}
	if !t.PeekBytesSet && (caps.Bytes < 0 || caps.Bytes > ToolPeekBytes) {
		caps.Bytes = ToolPeekBytes
	}
	v, err := t.Store.OpenValue(run, a.ID)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	switch {
	case a.Outline != nil:
		f := expand.RefFields{ID: &a.ID, Outline: a.Outline, After: a.After}
		if a.Lines != nil {
			rg, err := peek.ParseLines(*a.Lines)
			if err != nil {
				return nil, err
			}
			f.Lines = &rg
		}
		r, err := f.Ref()
		if err != nil {
			return nil, err
		}
		pg, err := expand.Outline(v, r, expand.OutlineOptions{Lines: caps.Lines, Bytes: caps.Bytes})
		if err != nil {
			return nil, err
		}
		return pg.Render(), nil
	case a.Bytes != nil:
		rg, err := peek.ParseBytes(*a.Bytes)
		if err != nil {
			return nil, err
		}
		s, e, err := peek.ByteSpan(v, rg)
		if err != nil {
			return nil, err
		}
		p, err := peek.Bytes(v, s, e, caps)
		if err != nil {
			return nil, err
		}
		return p.Render(), nil
	case a.Query != nil:
		o := peek.QueryOptions{Query: *a.Query, Regex: a.Regex, IgnoreCase: a.IgnoreCase}
		if a.Lines != nil {
			rg, err := peek.ParseLines(*a.Lines)
			if err != nil {
				return nil, err
			}
			if err := rg.CheckLinesAs(v.Desc.Lines, *a.Lines); err != nil {
				return nil, err
			}
			o.FirstLine, o.LastLine = rg.LinesOf(v.Desc.Lines)
		}
		if a.Context != nil {
			o.Context = *a.Context
		}
		if a.AfterLine != nil {
			o.AfterLine = *a.AfterLine
		}
		p, err := peek.Query(v, o, caps)
		if err != nil {
			return nil, err
		}
		return p.Render(), nil
	}
	first, last := int64(1), peek.ToEnd
	if a.Lines != nil {
		rg, err := peek.ParseLines(*a.Lines)
		if err != nil {
			return nil, err
		}
		if err := rg.CheckLinesAs(v.Desc.Lines, *a.Lines); err != nil {
			return nil, err
		}
		first, last = rg.LinesOf(v.Desc.Lines)
	}
	p, err := peek.Lines(v, first, last, caps)
	if err != nil {
		return nil, err
	}
	return p.Render(), nil
}

type resolveArgs struct {
	Run  string            `json:"run"`
	Ref  json.RawMessage   `json:"ref"`
	Refs []json.RawMessage `json:"refs"`
}

// resolve answers one reference with its text, several with the JSON array
// resolve --batch prints. The call is one step of the budget.
func (t *Tools) resolve(raw json.RawMessage) ([]byte, error) {
	var a resolveArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if (a.Ref == nil) == (a.Refs == nil) {
		return nil, retain.Errorf(retain.CodeUsage, "give ref (one reference) or refs (an array of them), not both and not neither")
	}
	run, err := t.run(a.Run)
	if err != nil {
		return nil, err
	}
	if a.Ref != nil {
		r, err := expand.ParseRef(a.Ref)
		if err != nil {
			return nil, err
		}
		return t.lookup(run, ToolResolve, r)
	}
	batch, err := json.Marshal(a.Refs)
	if err != nil {
		return nil, err
	}
	calls, err := expand.ParseBatch(bytes.NewReader(batch))
	if err != nil {
		return nil, err
	}
	ans, err := t.lookups(run, ToolResolve, calls)
	if err != nil {
		return nil, err
	}
	return json.Marshal(ans)
}

// lookups answers the lookups of one call, a step of its own.
func (t *Tools) lookups(run, via string, calls []expand.Lookup) ([]expand.Answer, error) {
	rs := &expand.Resolver{Store: t.Store, Run: run, Via: via}
	return rs.Lookups(calls, expand.BudgetOf(t.Limits), &expand.Spent{})
}

// lookup answers one reference as a step of its own: its text, or its
// lookup error as the call's error.
func (t *Tools) lookup(run, via string, r expand.Ref) ([]byte, error) {
	ans, err := t.lookups(run, via, []expand.Lookup{{Ref: r}})
	if err != nil {
		return nil, err
	}
	if ans[0].Err != nil {
		return nil, ans[0].Err
	}
	return ans[0].Text, nil
}

type listArgs struct {
	Run  string `json:"run"`
	Page *int64 `json:"page"`
}

// list answers {"$list_results": page}, as a lookup of its own step.
func (t *Tools) list(raw json.RawMessage) ([]byte, error) {
	var a listArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	run, err := t.run(a.Run)
	if err != nil {
		return nil, err
	}
	var page int64
	if a.Page != nil {
		page = *a.Page
	}
	r, err := expand.RefFields{List: &page}.Ref()
	if err != nil {
		return nil, err
	}
	text, err := t.lookup(run, ToolList, r)
	if retain.CodeOf(err) == retain.CodeUnknownReference && page == 0 && (a.Run == "" || a.Run == t.Run) {
		// The server's own run, nothing retained in it yet (its directory
		// is made with its first value): an empty page, as catalogue of
		// an empty run. A run the call names that does not exist (a
		// typo) stays unknown_reference.
		id, serr := retain.Sanitize(run)
		if serr != nil {
			return nil, err
		}
		return json.Marshal(struct {
			Run    retain.ID `json:"run"`
			Page   int64     `json:"page"`
			Total  int       `json:"total"`
			Next   *int64    `json:"next"`
			Values []any     `json:"values"`
		}{Run: id, Values: []any{}})
	}
	return text, err
}
