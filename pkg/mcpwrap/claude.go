package mcpwrap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/retval/retval/internal/jsondoc"
	"github.com/retval/retval/internal/splice"
)

// claudeFormat edits the mcpServers object of a Claude Code .mcp.json or
// settings file. Each stdio server's command and args values are spliced
// in place; a server Claude Code reaches at a URL (type http or sse) is
// left alone.
type claudeFormat struct{}

func (claudeFormat) kind() string { return "JSON" }

func (claudeFormat) decode(b []byte) (any, error) {
	if _, err := jsondoc.Parse(b); err != nil {
		var se *jsondoc.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("line %d, column %d: %v", se.Line, se.Column, se.Err)
		}
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errors.New("not a JSON object")
	}
	return v, nil
}

func (claudeFormat) where(s *server) string {
	if s.project != "" {
		return fmt.Sprintf("projects[%s].mcpServers.%s", jsondoc.Quote(s.project), s.name)
	}
	return "mcpServers." + s.name
}

func (claudeFormat) quote(s string) string { return jsondoc.Quote(s) }

func (f claudeFormat) expect(doc any, s *server, command string, args []string, argsPresent bool) error {
	m, _ := doc.(map[string]any)
	if s.project != "" {
		projects, _ := m["projects"].(map[string]any)
		m, _ = projects[s.project].(map[string]any)
	}
	servers, _ := m["mcpServers"].(map[string]any)
	e, ok := servers[s.name].(map[string]any)
	if !ok {
		return fmt.Errorf("%s is not an object", f.where(s))
	}
	setEntry(e, command, args, argsPresent)
	return nil
}

func (claudeFormat) servers(src string, _ any) ([]*server, error) {
	root, err := jsondoc.Parse([]byte(src))
	if err != nil {
		return nil, err
	}
	out, err := claudeServers(src, root.Get("mcpServers"), "", "mcpServers")
	if err != nil {
		return nil, err
	}
	// ~/.claude.json keeps each project's "local" servers under
	// projects[DIR].mcpServers.
	if projects := root.Get("projects"); projects != nil && projects.Kind == '{' {
		for i, dir := range projects.Keys {
			if p := projects.Vals[i]; p.Kind == '{' {
				more, err := claudeServers(src, p.Get("mcpServers"), dir, fmt.Sprintf("projects[%s].mcpServers", jsondoc.Quote(dir)))
				if err != nil {
					return nil, err
				}
				out = append(out, more...)
			}
		}
	}
	return out, nil
}

// claudeServers finds the servers of the mcpServers object all (named path
// in messages), which may be nil.
func claudeServers(src string, all *jsondoc.Node, project, path string) ([]*server, error) {
	if all == nil {
		return nil, nil
	}
	if all.Kind != '{' {
		return nil, fmt.Errorf("%s is not an object", path)
	}
	var out []*server
	for i, name := range all.Keys {
		s := &server{name: name, project: project}
		out = append(out, s)
		n := all.Vals[i]
		if n.Kind != '{' {
			s.cmdErr = errors.New("is not an object: fix it by hand")
			continue
		}
		typ, _ := n.Get("type").Text()
		if u, ok := n.Get("url").Text(); ok || typ == "http" || typ == "sse" {
			s.remote = u
			if s.remote == "" {
				s.remote = typ
			}
			if typ != "stdio" {
				continue
			}
		}
		ci := -1
		for j, k := range n.Keys {
			if k == "command" {
				ci = j
			}
		}
		if ci < 0 {
			continue
		}
		c := n.Vals[ci]
		v, ok := c.Text()
		if !ok {
			s.cmdErr = errors.New(`command is not a string: write "command": "PROGRAM"`)
			continue
		}
		s.cmd = &span{start: c.Start, end: c.End, s: v, isString: true}
		s.addAt = c.End
		kv := src[strings.LastIndexByte(src[:c.Start], '"')+1 : c.Start]
		s.addArgs = [2]string{jsondoc.Items(n).Sep(src, splice.Layout{}) + `"args"` + kv, ""}
		// An args left empty by Unwrap stays, as "args": [] (Claude Code
		// writes one for a server without arguments).
		a := n.Get("args")
		if a == nil {
			continue
		}
		if a.Kind != '[' {
			s.argsErr = errors.New(`args is not an array: write "args": ["ARG", ...]`)
			continue
		}
		s.args = &array{start: a.Start, end: a.End}
		for _, e := range a.Vals {
			t, ok := e.Text()
			if !ok {
				s.argsErr = errors.New("args holds something other than strings: write each argument as a string")
				break
			}
			s.args.elems = append(s.args.elems, span{start: e.Start, end: e.End, s: t, isString: true})
		}
	}
	return out, nil
}
