package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/retval/retval/internal/jsonstr"
	"github.com/retval/retval/pkg/expand"
	"github.com/retval/retval/pkg/retain"
)

// ProxyInstructions is the instructions text the proxy adds to the
// server's initialize result: how to read a stub back (Instructions) and
// how to reuse what a value holds in a tool call's arguments without
// typing it again (expand.Instructions), which only the proxy can offer:
// it expands the references before the call reaches the server. Given
// once, at initialize, not in every tool's description: 916 bytes, 246
// tokens in OpenAI's o200k_base (the reference form's part, 709 bytes,
// 197), which a client that puts a server's instructions in its system
// prompt sends with every request.
const ProxyInstructions = Instructions + "\n\n" + expand.Instructions

// expanded is a tools/call for the server after the proxy looked for
// references in its arguments.
type expanded struct {
	// msg is the request to forward: the client's own when its arguments
	// hold no reference, else the same request with the arguments
	// expanded.
	msg json.RawMessage
	// summary is the line to add to the call's result, "" when nothing
	// was expanded.
	summary string
	// refused, when not nil, is the answer to the call, which is not
	// forwarded: a reference in it failed.
	refused *CallToolResult
}

// expandCall expands the references in the arguments of msg, a
// tools/call of the server's tool: every string that begins with
// "$expand:" and every bare {"$ref": ID, …} or {"$concat": […]} object
// (an MCP client passes objects to the server unchecked), against the
// proxy's run — the run whose values its stubs name. All or nothing:
// a call any of whose references fails is refused, each failure named,
// and nothing reaches the server. Arguments that are not one JSON
// document are the server's to judge: the call is forwarded as it is.
func (p *Proxy) expandCall(msg json.RawMessage, tool string, args json.RawMessage) expanded {
	if !bytes.Contains(args, []byte("$")) && !bytes.Contains(args, []byte(`\u`)) {
		return expanded{msg: msg} // no reference can be there
	}
	x := &expand.Expander{Store: p.Tools.Store, Run: p.Tools.Run, MaxBytes: p.Tools.Limits.MaxExpandBytes}
	in, err := x.ExpandInput(args, expand.InputOptions{Objects: true})
	switch {
	case retain.CodeOf(err) == retain.CodeUsage:
		p.logf("the arguments of a call of %s were forwarded as they are: %v", tool, err)
		return expanded{msg: msg}
	case err != nil:
		return expanded{refused: refusal(err)}
	case len(in.Fields) == 0:
		return expanded{msg: msg}
	}
	out, err := withArguments(msg, in.Doc)
	if err != nil {
		return expanded{refused: refusal(err)}
	}
	x.LogInput("proxy", tool, in)
	return expanded{msg: out, summary: in.Summary()}
}

// withArguments returns the tools/call request msg with args as its
// params.arguments; every other member is kept.
func withArguments(msg json.RawMessage, args []byte) (json.RawMessage, error) {
	m := object(msg)
	params := object(m["params"])
	if params == nil {
		return nil, retain.Errorf(retain.CodeUsage, "the request's params are not an object")
	}
	params["arguments"] = args
	var err error
	if m["params"], err = jsonstr.Marshal(params); err != nil {
		return nil, err
	}
	return jsonstr.Marshal(m)
}

// refusal is the tool result of a call whose references could not be
// expanded: isError, one text block naming each failing reference by its
// path in the arguments, with its message and code.
func refusal(err error) *CallToolResult {
	var b strings.Builder
	b.WriteString("retval could not expand the references of this call; it was not sent to the server:")
	var r *expand.Refusal
	if errors.As(err, &r) {
		for _, f := range r.Failures {
			fmt.Fprintf(&b, " at %q: %s (%s);", f.Path, f.Message, f.Code)
		}
	} else {
		fmt.Fprintf(&b, " %s (%s);", err, retain.CodeOf(err))
	}
	b.WriteString(" correct them and call again")
	return &CallToolResult{IsError: true, Content: []TextContent{{Text: b.String()}}}
}

// withSummary appends the summary line of the call's expanded references
// as a last text block to result, a tools/call result; nil when result
// has no content array to append to (it is then relayed as it is).
func withSummary(result json.RawMessage, summary string) json.RawMessage {
	m := object(result)
	if m == nil {
		return nil
	}
	var content []json.RawMessage
	if c, ok := m["content"]; ok && json.Unmarshal(c, &content) != nil {
		return nil
	}
	block, err := jsonstr.Marshal(map[string]string{"type": "text", "text": summary})
	if err != nil {
		return nil
	}
	if m["content"], err = jsonstr.Marshal(append(content, block)); err != nil {
		return nil
	}
	b, err := jsonstr.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}
