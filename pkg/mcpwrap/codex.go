package mcpwrap

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/retval/retval/internal/tomldoc"
)

// codexFormat edits a Codex config.toml as text. TOML has no editor that
// keeps a file's layout, so the file is scanned for its table headers and
// key/value lines, and only the values of command and args inside
// [mcp_servers.NAME] are replaced. Those must be one-line strings and a
// one-line array of one-line strings; any other form (a multi-line array,
// an inline table, dotted keys) is refused with what to change by hand.
type codexFormat struct{}

func (codexFormat) kind() string { return "TOML" }

func (codexFormat) decode(b []byte) (any, error) {
	var m map[string]any
	if err := tomldoc.Decode(b, &m); err != nil {
		return nil, errors.New(oneLine(err.Error()))
	}
	return m, nil
}

func (codexFormat) where(s *server) string { return "[mcp_servers." + tomlKey(s.name) + "]" }

func (codexFormat) quote(s string) string { return tomlQuote(s) }

func (codexFormat) expect(doc any, s *server, command string, args []string, argsPresent bool) error {
	m, _ := doc.(map[string]any)
	servers, _ := m["mcp_servers"].(map[string]any)
	e, ok := servers[s.name].(map[string]any)
	if !ok {
		return fmt.Errorf("[mcp_servers.%s] is not a table", tomlKey(s.name))
	}
	setEntry(e, command, args, argsPresent)
	return nil
}

func (codexFormat) servers(src string, doc any) ([]*server, error) {
	stmts, err := scanTOML(src)
	if err != nil {
		return nil, err
	}
	var out []*server
	var cur *server
	var cmdStmt *tomlStmt
	for i := range stmts {
		st := &stmts[i]
		if st.header {
			cur, cmdStmt = nil, nil
			if len(st.key) == 2 && st.key[0] == "mcp_servers" {
				cur = &server{name: st.key[1]}
				if st.array {
					cur.cmdErr = fmt.Errorf("is an array of tables: write it as one [mcp_servers.%s] table", tomlKey(st.key[1]))
				}
				out = append(out, cur)
			}
			continue
		}
		if cur == nil {
			continue
		}
		switch st.key[0] {
		case "command":
			cmdStmt = st
			if len(st.key) > 1 {
				cur.cmdErr = errors.New(`command is a table: write command = "PROGRAM"`)
				continue
			}
			v, err := tomlString(src, st.valStart, st.valEnd)
			if err != nil {
				cur.cmdErr = fmt.Errorf(`command is %v: write it as command = "PROGRAM" on one line, then run this again`, err)
				continue
			}
			cur.cmd = &v
			cur.addAt = st.lineEnd
			cur.addArgs = [2]string{newlineAt(src, st.lineEnd) + src[st.lineStart:st.keyStart] + "args" + src[st.keyEnd:st.valStart], ""}
		case "args":
			if len(st.key) > 1 {
				cur.argsErr = errors.New(`args is a table: write args = ["ARG", ...] on one line`)
				continue
			}
			a, err := tomlArray(src, st.valStart, st.valEnd)
			if err != nil {
				cur.argsErr = fmt.Errorf("args %v, then run this again", err)
				continue
			}
			cur.args = a
			if cmdStmt != nil && st.lineStart == cmdStmt.lineEnd+len(newlineAt(src, cmdStmt.lineEnd)) {
				cur.argsAdjacent = true
				cur.cut = [2]int{cmdStmt.lineEnd, st.lineEnd}
			}
		case "url":
			if v, err := tomlString(src, st.valStart, st.valEnd); err == nil {
				cur.remote = v.s
			} else {
				cur.remote = src[st.valStart:st.valEnd]
			}
		}
	}
	// A server written some other way (mcp_servers = {...}, an inline
	// table, dotted keys) is in the decoded file but has no table here.
	m, _ := doc.(map[string]any)
	all, _ := m["mcp_servers"].(map[string]any)
	var names []string
	for n := range all {
		if !slices.ContainsFunc(out, func(s *server) bool { return s.name == n }) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		out = append(out, &server{name: n, cmdErr: fmt.Errorf(`is written as an inline table or with dotted keys: write it as its own [mcp_servers.%s] table with command = "..." and args = [...] lines, then run this again`, tomlKey(n))})
	}
	return out, nil
}

// newlineAt is the line break at i ("\r\n" or "\n"; "\n" at the end of
// the text).
func newlineAt(src string, i int) string {
	if strings.HasPrefix(src[i:], "\r\n") {
		return "\r\n"
	}
	return "\n"
}

// tomlStmt is a table header or a key/value pair of a TOML text.
type tomlStmt struct {
	header, array bool
	key           []string // decoded key parts
	// lineStart is where the line starts, keyStart and keyEnd delimit
	// the key, valStart and valEnd the value, and lineEnd is the end of
	// the line after any comment, before its line break.
	lineStart, keyStart, keyEnd, valStart, valEnd, lineEnd int
}

type tomlScanner struct {
	s string
	i int
}

var errLayout = errors.New("cannot follow the file's layout")

// scanTOML lists the headers and top-level key/value pairs of a TOML text
// already known to decode.
func scanTOML(src string) (stmts []tomlStmt, err error) {
	defer func() {
		if recover() != nil { // an index out of range: a layout not understood
			stmts, err = nil, errLayout
		}
	}()
	p := &tomlScanner{s: src}
	for p.i < len(src) {
		st := tomlStmt{lineStart: p.i}
		p.blank()
		if p.i >= len(src) {
			break
		}
		switch c := src[p.i]; c {
		case '\n', '\r', '#':
			p.eol()
			p.newline()
			if p.i == st.lineStart {
				p.i++ // a lone carriage return
			}
			continue
		case '[':
			st.header = true
			p.i++
			if src[p.i] == '[' {
				st.array = true
				p.i++
			}
			p.blank()
			st.keyStart = p.i
			if st.key, st.keyEnd, err = p.key(); err != nil {
				return nil, err
			}
			if src[p.i] != ']' {
				return nil, errLayout
			}
			p.i++
			if st.array {
				p.i++
			}
		default:
			st.keyStart = p.i
			if st.key, st.keyEnd, err = p.key(); err != nil {
				return nil, err
			}
			if src[p.i] != '=' {
				return nil, errLayout
			}
			p.i++
			p.blank()
			st.valStart = p.i
			if err := p.value(); err != nil {
				return nil, err
			}
			st.valEnd = p.i
		}
		st.lineEnd = p.eol()
		p.newline()
		stmts = append(stmts, st)
	}
	return stmts, nil
}

// blank skips spaces and tabs.
func (p *tomlScanner) blank() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// eol skips white space and a comment to the end of the line and returns
// where its line break starts.
func (p *tomlScanner) eol() int {
	p.blank()
	if p.i < len(p.s) && p.s[p.i] == '#' {
		for p.i < len(p.s) && p.s[p.i] != '\n' {
			p.i++
		}
		if p.i > 0 && p.s[p.i-1] == '\r' {
			p.i--
		}
	}
	return p.i
}

// newline skips one line break.
func (p *tomlScanner) newline() {
	if strings.HasPrefix(p.s[p.i:], "\r\n") {
		p.i += 2
	} else if p.i < len(p.s) && p.s[p.i] == '\n' {
		p.i++
	}
}

// space skips white space, line breaks and comments (inside an array).
func (p *tomlScanner) space() {
	for {
		p.eol()
		if p.i < len(p.s) && (p.s[p.i] == '\n' || p.s[p.i] == '\r') {
			p.i++
			continue
		}
		return
	}
}

// key reads a dotted key and the white space after it; end is where the
// key's text ends.
func (p *tomlScanner) key() (parts []string, end int, err error) {
	for {
		var part string
		switch c := p.s[p.i]; c {
		case '"', '\'':
			start := p.i
			if err := p.str(); err != nil {
				return nil, 0, err
			}
			if part, err = decodeTOMLString(p.s[start:p.i]); err != nil {
				return nil, 0, err
			}
		default:
			start := p.i
			for p.i < len(p.s) && isBare(p.s[p.i]) {
				p.i++
			}
			if p.i == start {
				return nil, 0, errLayout
			}
			part = p.s[start:p.i]
		}
		parts = append(parts, part)
		end = p.i
		p.blank()
		if p.s[p.i] != '.' {
			return parts, end, nil
		}
		p.i++
		p.blank()
	}
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// str skips a string of any of the four kinds.
func (p *tomlScanner) str() error {
	q := p.s[p.i]
	delim := strings.Repeat(string(q), 3)
	if strings.HasPrefix(p.s[p.i:], delim) {
		p.i += 3
		for !strings.HasPrefix(p.s[p.i:], delim) {
			if q == '"' && p.s[p.i] == '\\' {
				p.i++
			}
			p.i++
		}
		p.i += 3
		for n := 0; n < 2 && p.i < len(p.s) && p.s[p.i] == q; n++ {
			p.i++ // up to two quotes just before the closing ones
		}
		return nil
	}
	p.i++
	for p.s[p.i] != q {
		if p.s[p.i] == '\n' {
			return errLayout
		}
		if q == '"' && p.s[p.i] == '\\' {
			p.i++
		}
		p.i++
	}
	p.i++
	return nil
}

// value skips one value.
func (p *tomlScanner) value() error {
	switch c := p.s[p.i]; c {
	case '"', '\'':
		return p.str()
	case '[':
		p.i++
		for {
			p.space()
			if p.s[p.i] == ']' {
				p.i++
				return nil
			}
			if err := p.value(); err != nil {
				return err
			}
			p.space()
			if p.s[p.i] == ',' {
				p.i++
			}
		}
	case '{':
		p.i++
		for {
			p.space()
			if p.s[p.i] == '}' {
				p.i++
				return nil
			}
			if _, _, err := p.key(); err != nil {
				return err
			}
			if p.s[p.i] != '=' {
				return errLayout
			}
			p.i++
			p.blank()
			if err := p.value(); err != nil {
				return err
			}
			p.space()
			if p.s[p.i] == ',' {
				p.i++
			}
		}
	}
	start := p.i
	p.scalar()
	// A date and a time may be parted by a space: 1979-05-27 07:32:00.
	if p.i-start == 10 && p.s[start+4] == '-' && p.i+3 < len(p.s) && p.s[p.i] == ' ' && isDigit(p.s[p.i+1]) && isDigit(p.s[p.i+2]) && p.s[p.i+3] == ':' {
		p.i++
		p.scalar()
	}
	if p.i == start {
		return errLayout
	}
	return nil
}

func (p *tomlScanner) scalar() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n,]}#", p.s[p.i]) < 0 {
		p.i++
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// tomlString reads the one-line string lexeme src[start:end].
func tomlString(src string, start, end int) (span, error) {
	lex := src[start:end]
	if strings.HasPrefix(lex, `"""`) || strings.HasPrefix(lex, `'''`) {
		return span{}, errors.New("a multi-line string")
	}
	if lex == "" || (lex[0] != '"' && lex[0] != '\'') {
		return span{}, errors.New("not a string")
	}
	s, err := decodeTOMLString(lex)
	if err != nil {
		return span{}, err
	}
	return span{start: start, end: end, s: s, isString: true}, nil
}

// tomlArray reads src[start:end] as a one-line array of one-line strings.
func tomlArray(src string, start, end int) (*array, error) {
	lex := src[start:end]
	if lex == "" || lex[0] != '[' {
		return nil, errors.New(`is not an array: write args = ["ARG", ...]`)
	}
	if strings.ContainsAny(lex, "\r\n") {
		return nil, errors.New("spans several lines: write it on one line")
	}
	a := &array{start: start, end: end}
	p := &tomlScanner{s: src[:end], i: start + 1}
	for {
		p.blank()
		if p.s[p.i] == ']' {
			return a, nil
		}
		e := p.i
		if c := p.s[p.i]; c != '"' && c != '\'' {
			return nil, errors.New("holds something other than strings: write each argument as a string")
		}
		if err := p.str(); err != nil {
			return nil, err
		}
		v, err := tomlString(src, e, p.i)
		if err != nil {
			return nil, fmt.Errorf("holds %v: write each argument as a one-line string", err)
		}
		a.elems = append(a.elems, v)
		p.blank()
		if p.s[p.i] == ',' {
			p.i++
		}
	}
}

// decodeTOMLString is the value of a one-line string lexeme.
func decodeTOMLString(lex string) (string, error) {
	var v struct{ S string }
	if err := tomldoc.Decode([]byte("S = "+lex), &v); err != nil {
		return "", errors.New(oneLine(err.Error()))
	}
	return v.S, nil
}

// tomlQuote writes s as a TOML basic string.
func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlKey writes a key part bare when it can be, else quoted.
func tomlKey(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		if !isBare(k[i]) {
			return tomlQuote(k)
		}
	}
	return k
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
