// Package tomldoc decodes TOML documents (retval's config files, Codex's
// config.toml) with github.com/pelletier/go-toml/v2, whose init does
// nothing measurable: every retval process links the TOML decoder, so its
// init is paid by every call, the ones that read no TOML too.
package tomldoc

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/retval/retval/internal/safetext"
)

// Decode decodes the TOML document b into v (a map[string]any, or a
// struct). Values decode as go-toml/v2 decodes them into an interface:
// integers as int64, floats as float64, tables as map[string]any, arrays
// (of tables too) as []any, an offset date-time as time.Time, a local
// date-time, date or time as toml.LocalDateTime, toml.LocalDate or
// toml.LocalTime.
//
// A document that is not TOML gives one line naming where:
// "toml: line 3, column 12: strings must be quoted". Control characters
// of the document (in a key the message quotes) are escaped.
func Decode(b []byte, v any) error {
	err := toml.Unmarshal(b, v)
	if err == nil {
		return nil
	}
	msg := strings.TrimPrefix(err.Error(), "toml: ")
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		return &Error{Line: line, Column: col, Msg: clean(msg)}
	}
	return &Error{Msg: clean(msg)}
}

// Error is a document that does not decode, and where (Line and Column
// count from 1; both are 0 when the decoder did not say).
type Error struct {
	Line, Column int
	Msg          string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return "toml: " + e.Msg
	}
	return fmt.Sprintf("toml: line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// clean is s on one line with nothing a terminal acts on.
func clean(s string) string {
	s = string(safetext.Append(nil, []byte(s)))
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s)
}

// Kind names the kind of a value Decode gives, for messages: "a table",
// "an array", "a date-time", "a local date-time", "a local date", "a
// local time", "a string", "an integer", "a float", "a boolean". Any
// other value is named by its Go type.
func Kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a table"
	case []any:
		return "an array"
	case time.Time:
		return "a date-time"
	case toml.LocalDateTime:
		return "a local date-time"
	case toml.LocalDate:
		return "a local date"
	case toml.LocalTime:
		return "a local time"
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}
