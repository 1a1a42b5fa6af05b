// Package config resolves retval's settings: each has a flag, an
// environment variable and a config file key, with precedence
// flag > environment > config file > default, and remembers where each
// value came from. A Go harness resolves its settings here to honour the
// same flags, variables and files as the CLI, and so to produce the same
// stubs.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/internal/textdist"
	"github.com/retval/retval/internal/tomldoc"
	"github.com/retval/retval/pkg/gc"
	"github.com/retval/retval/pkg/retain"
	"go.yaml.in/yaml/v3"
)

// Kind is how a setting's text is parsed.
type Kind int

const (
	String Kind = iota
	Size
	Int
	Duration
	Bool
)

// Setting is one configurable value.
type Setting struct {
	Flag    string // flag name without dashes
	Default string
	Kind    Kind
	Usage   string
}

// Env is the environment variable of s: RETVAL_ plus the flag in upper snake case.
func (s Setting) Env() string {
	return "RETVAL_" + strings.ToUpper(strings.ReplaceAll(s.Flag, "-", "_"))
}

// Key is the config file key of s: the flag in snake case.
func (s Setting) Key() string { return strings.ReplaceAll(s.Flag, "-", "_") }

// limits are the defaults retain enforces; the settings' defaults are
// rendered from them (and from gc's), so there is one set of defaults.
var limits = retain.DefaultLimits()

// sizeText renders a default size the way help shows it: in the largest
// binary unit that divides it.
func sizeText(n int64) string {
	switch {
	case n != 0 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	case n != 0 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KiB"
	}
	return strconv.FormatInt(n, 10)
}

// durationText renders a default duration in whole days or hours (as a
// setting accepts it), else as Go writes it.
func durationText(d time.Duration) string {
	switch {
	case d != 0 && d%(24*time.Hour) == 0:
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	case d != 0 && d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	}
	return d.String()
}

// Settings lists every setting, in the order help and `config` show them.
var Settings = []Setting{
	{"runs-dir", "./runs", String, "directory holding the runs"},
	{"store", "", String, "s3://BUCKET/PREFIX: keep the runs on S3-compatible object storage instead of the runs-dir"},
	{"run", "", String, "run id"},
	{"json", "false", Bool, "machine-readable output"},
	{"off", "false", Bool, "pass every input through verbatim and store nothing"},
	{"policy", "legacy", String, "at capacity: legacy (preview, no reference) or bounded (exit 4)"},
	{"compress", "none", String, "content storage: none, zstd or auto"},
	{"read-more", "peek", String, "stub's read-more line: peek (for a peek tool) or shell (a command to paste into a shell)"},
	{"threshold", sizeText(limits.Threshold), Size, "retain results larger than this (0 retains everything)"},
	{"preview-bytes", strconv.FormatInt(limits.PreviewBytes, 10), Size, "head + tail excerpt budget of a stub"},
	{"peek-lines", strconv.FormatInt(limits.PeekLines, 10), Int, "lines per peek"},
	{"peek-bytes", sizeText(limits.PeekBytes), Size, "output bytes per peek (kept below the threshold)"},
	{"max-value-size", sizeText(limits.MaxValueSize), Size, "largest value retained (0 = no limit)"},
	{"max-run-bytes", sizeText(limits.MaxRunBytes), Size, "bytes per run, uncompressed (0 = no limit)"},
	{"max-run-values", strconv.FormatInt(limits.MaxRunValues, 10), Int, "values per run (0 = no limit)"},
	{"max-lookups", strconv.FormatInt(limits.MaxLookups, 10), Int, "lookups per step"},
	{"max-lookup-bytes", sizeText(limits.MaxLookupBytes), Size, "raw bytes per lookup"},
	{"max-step-bytes", sizeText(limits.MaxStepBytes), Size, "bytes of all lookups of a step, after JSON escaping"},
	{"max-expand-bytes", sizeText(limits.MaxExpandBytes), Size, "expanded content per expand"},
	{"grace", durationText(limits.Grace), Duration, "gc never touches what was active this recently"},
	{"max-age", durationText(gc.DefaultMaxAge), Duration, "gc removes runs idle longer than this (0 = no age rule)"},
	{"max-bytes", "0", Size, "gc then removes oldest runs until the store is within this size (0 = no cap)"},
	{"keep-runs", "0", Int, "gc then removes oldest runs until at most this many remain (0 = no cap)"},
}

// Lookup returns the setting named by flag.
func Lookup(flag string) (Setting, bool) {
	for _, s := range Settings {
		if s.Flag == flag {
			return s, true
		}
	}
	return Setting{}, false
}

// Source says where a value came from.
type Source string

const (
	FromFlag    Source = "flag"
	FromEnv     Source = "env"
	FromFile    Source = "config"
	FromDefault Source = "default"
)

// Value is a resolved setting.
type Value struct {
	Setting
	Text   string
	Source Source
	// File is the config file a FromFile value came from.
	File string
}

// File holds the settings of a config file, by key, as text.
type File struct {
	Path string
	Keys map[string]string
	// Unknown are the file's keys that name no setting, sorted. Check
	// makes them an error; a command that runs something on the user's
	// behalf warns instead (UnknownKeyError.Error is the warning's text).
	Unknown []string
}

// UnknownKeyError is a config file's keys that name no setting: a typo
// (threshhold), a key of a newer retval, or "config" (a config file
// cannot name another).
type UnknownKeyError struct {
	Path string
	Keys []string
}

func (e *UnknownKeyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "config %s: unknown setting", e.Path)
	if len(e.Keys) > 1 {
		b.WriteString("s")
	}
	for i, k := range e.Keys {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %q", k)
		if k == "config" {
			b.WriteString(" (a config file cannot name another)")
		} else if near := nearestKey(k); near != "" {
			fmt.Fprintf(&b, " (did you mean %q?)", near)
		}
	}
	return b.String()
}

// Check returns an *UnknownKeyError when the file holds unknown keys.
func (f File) Check() error {
	if len(f.Unknown) == 0 {
		return nil
	}
	return &UnknownKeyError{Path: f.Path, Keys: f.Unknown}
}

// nearestKey is the setting key nearest to k in edit distance, "" when
// none is near enough to be a typo of it.
func nearestKey(k string) string {
	best, bestD := "", textdist.Limit(k)+1
	for _, s := range Settings {
		if s.Flag == "config" {
			continue
		}
		if d := textdist.Distance(k, s.Key()); d < bestD {
			best, bestD = s.Key(), d
		}
	}
	return best
}

// UserFile is the user's config file, read when no --config (or
// RETVAL_CONFIG) is given: $XDG_CONFIG_HOME/retval/config.toml, by default
// ~/.config/retval/config.toml. It is "" when neither variable says where.
func UserFile() string {
	dir := XDGDir("XDG_CONFIG_HOME", ".config")
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "retval", "config.toml")
}

// XDGDir is an XDG base directory: the variable env when it holds an
// absolute path (the XDG rule: a relative one is ignored), else
// $HOME/fallback; "" when HOME is not an absolute path either.
func XDGDir(env, fallback string) string {
	if dir := os.Getenv(env); filepath.IsAbs(dir) {
		return dir
	}
	home := os.Getenv("HOME")
	if !filepath.IsAbs(home) {
		return ""
	}
	return filepath.Join(home, fallback)
}

// MaxFileSize bounds a config file: it holds a few dozen settings.
const MaxFileSize = 1 << 20

// LoadFile reads a TOML or YAML config file (chosen by extension; other
// names are tried as TOML, then YAML). Keys that name no setting are
// listed in File.Unknown, for the caller to refuse (File.Check: a typo in
// a config file should not silently leave a limit at its default) or to
// warn about. The file may be a symlink, but must be a regular file of at
// most MaxFileSize.
func LoadFile(path string) (File, error) {
	b, err := fsx.ReadUserFile(path, MaxFileSize)
	if err != nil {
		return File{}, fmt.Errorf("config: %v", err)
	}
	raw := map[string]any{}
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".yaml", ".yml":
		err = yamlDecode(b, &raw)
	case ".toml":
		err = tomldoc.Decode(b, &raw)
	default:
		if err = tomldoc.Decode(b, &raw); err != nil {
			raw = map[string]any{}
			err = yamlDecode(b, &raw)
		}
	}
	if err != nil {
		return File{}, fmt.Errorf("config %s: %v", path, err)
	}
	f := File{Path: path, Keys: map[string]string{}}
	for k, v := range raw {
		s, ok := lookupKey(k)
		if !ok || k == "config" { // a config file cannot name another
			f.Unknown = append(f.Unknown, k)
			continue
		}
		switch v := v.(type) {
		case string, bool, int, int64, uint64, float64:
			f.Keys[s.Key()] = fmt.Sprint(v)
		case nil: // YAML's "key:" with no value
			return File{}, fmt.Errorf("config %s: %s: want a number, string or boolean, not null", path, k)
		default: // a table, an array, a date (YAML decodes to the same Go types)
			return File{}, fmt.Errorf("config %s: %s: want a number, string or boolean, not %s", path, k, tomldoc.Kind(v))
		}
	}
	slices.Sort(f.Unknown)
	return f, nil
}

// maxYAMLKeys bounds the keys of any one mapping of a YAML config (a
// config has a few dozen settings at most): go.yaml.in/yaml/v3 checks a
// mapping for duplicate keys by comparing every pair, so a 1 MiB file of
// 100,000 keys took about a minute.
const maxYAMLKeys = 1000

func yamlDecode(b []byte, v *map[string]any) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	if n := widestMapping(&doc); n != nil {
		return fmt.Errorf("line %d: a mapping of %d keys, more than %d (a config holds a few dozen settings)", n.Line, len(n.Content)/2, maxYAMLKeys)
	}
	return doc.Decode(v)
}

// widestMapping is a mapping under n with more than maxYAMLKeys keys, or
// nil. Aliases are not followed: what they name is walked where it stands.
func widestMapping(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.MappingNode && len(n.Content)/2 > maxYAMLKeys {
		return n
	}
	for _, c := range n.Content {
		if w := widestMapping(c); w != nil {
			return w
		}
	}
	return nil
}

func lookupKey(k string) (Setting, bool) {
	for _, s := range Settings {
		if s.Key() == k {
			return s, true
		}
	}
	return Setting{}, false
}

// Resolve picks the value of s: flag (when given), then environment, then
// file, then default.
func Resolve(s Setting, flag string, flagSet bool, file File) Value {
	switch {
	case flagSet:
		return Value{Setting: s, Text: flag, Source: FromFlag}
	}
	if v, ok := os.LookupEnv(s.Env()); ok && v != "" { // empty counts as unset, as in most tools
		return Value{Setting: s, Text: v, Source: FromEnv}
	}
	if v, ok := file.Keys[s.Key()]; ok {
		return Value{Setting: s, Text: v, Source: FromFile, File: file.Path}
	}
	return Value{Setting: s, Text: s.Default, Source: FromDefault}
}

// sizeUnits are the suffixes ParseSize accepts, matched regardless of
// case: every one is binary (1024), as docker and restic read them.
var sizeUnits = []struct {
	suf []string
	m   int64
}{
	{[]string{"b"}, 1},
	{[]string{"k", "kb", "kib"}, 1 << 10},
	{[]string{"m", "mb", "mib"}, 1 << 20},
	{[]string{"g", "gb", "gib"}, 1 << 30},
	{[]string{"t", "tb", "tib"}, 1 << 40},
}

// SizeForms lists every form ParseSize accepts, for messages and help.
const SizeForms = "a number of bytes, or a number with a suffix k, kb, kib (1024), m, mb, mib, g, gb, gib or t, tb, tib, in any case (16MiB, 512k, 2GB); every unit is binary"

// ParseSize reads a byte count: plain bytes, or a number with one of the
// suffixes of sizeUnits in any case ("16MiB", "512k", "2GB", "4kib"), all
// binary.
func ParseSize(t string) (int64, error) {
	s := strings.TrimSpace(t)
	num := strings.TrimRightFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' })
	suf := strings.ToLower(s[len(num):])
	num = strings.TrimSpace(num)
	mult := int64(0)
	if suf == "" {
		mult = 1
	}
	for _, u := range sizeUnits {
		for _, f := range u.suf {
			if suf == f {
				mult = u.m
			}
		}
	}
	if mult == 0 {
		return 0, fmt.Errorf("invalid size %q: unknown unit %q; want %s", t, s[len(s)-len(suf):], SizeForms)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q: want %s", t, SizeForms)
	}
	return n * mult, nil
}

// durationUnits are the units ParseDuration adds to Go's.
var durationUnits = map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour}

// ParseDuration reads a Go duration ("90s", "15m", "36h", "1h30m"), or a
// number of days or weeks ("14d", "2w", "1.5d"); "0" is zero.
func ParseDuration(t string) (time.Duration, error) {
	s := strings.TrimSpace(t)
	if s == "0" {
		return 0, nil
	}
	for suf, unit := range durationUnits {
		d, ok := strings.CutSuffix(s, suf)
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(d, 64)
		// Below 2^63 ns (about 106,751 days): past it the conversion wraps
		// to a negative duration, which as a grace period protects nothing.
		if err == nil && n >= 0 && n*float64(unit) < math.MaxInt64 {
			return time.Duration(n * float64(unit)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid duration %q: want a number with a unit s, m, h, d (days) or w (weeks), e.g. 90s, 15m, 36h, 14d or 2w (or a Go duration such as 1h30m)", t)
	}
	return d, nil
}

// ParseBool reads true/false/1/0/yes/no.
func ParseBool(t string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(t)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off", "":
		return false, nil
	}
	return false, fmt.Errorf("invalid boolean %q", t)
}

// Resolved is every setting after precedence.
type Resolved struct {
	Values  map[string]Value
	Limits  retain.Limits
	Policy  retain.Policy
	RunsDir string
	// Store is the object storage address (s3://BUCKET/PREFIX), or "".
	Store string
	Run   string
	JSON  bool
	Off   bool
	// Compress is none, zstd or auto.
	Compress string
	ReadMore retain.ReadMore
	// gc's policy.
	MaxAge   time.Duration
	MaxBytes int64
	KeepRuns int64
}

// Location is the store the settings name: the object storage address
// when one is set, else the runs-dir. retain.Open takes either.
func (r *Resolved) Location() string {
	if r.Store != "" {
		return r.Store
	}
	return r.RunsDir
}

// Build parses every value and fills Resolved. Errors name the setting and
// where its bad value came from.
func Build(values map[string]Value) (*Resolved, error) {
	r := &Resolved{Values: values}
	var err error
	bad := func(v Value, e error) error {
		where := "--" + v.Flag
		switch v.Source {
		case FromEnv:
			where = v.Env()
		case FromFile:
			where = "config key " + v.Key()
		}
		return fmt.Errorf("%s: %v", where, e)
	}
	size := func(name string, dst *int64) {
		if err != nil {
			return
		}
		v := values[name]
		n, e := ParseSize(v.Text)
		if e != nil {
			err = bad(v, e)
		}
		*dst = n
	}
	num := func(name string, dst *int64) {
		if err != nil {
			return
		}
		v := values[name]
		n, e := strconv.ParseInt(strings.TrimSpace(v.Text), 10, 64)
		if e != nil || n < 0 {
			err = bad(v, fmt.Errorf("invalid count %q: want a whole number ≥ 0", v.Text))
		}
		*dst = n
	}
	boolean := func(name string, dst *bool) {
		if err != nil {
			return
		}
		v := values[name]
		b, e := ParseBool(v.Text)
		if e != nil {
			err = bad(v, e)
		}
		*dst = b
	}
	L := &r.Limits
	size("threshold", &L.Threshold)
	size("preview-bytes", &L.PreviewBytes)
	num("peek-lines", &L.PeekLines)
	size("peek-bytes", &L.PeekBytes)
	size("max-value-size", &L.MaxValueSize)
	size("max-run-bytes", &L.MaxRunBytes)
	num("max-run-values", &L.MaxRunValues)
	num("max-lookups", &L.MaxLookups)
	size("max-lookup-bytes", &L.MaxLookupBytes)
	size("max-step-bytes", &L.MaxStepBytes)
	size("max-expand-bytes", &L.MaxExpandBytes)
	size("max-bytes", &r.MaxBytes)
	num("keep-runs", &r.KeepRuns)
	boolean("json", &r.JSON)
	boolean("off", &r.Off)
	if err != nil {
		return nil, err
	}
	// A setting's 0 is "no limit"; in Limits that is Unlimited, and 0 the
	// default.
	for _, p := range []*int64{&L.Threshold, &L.PreviewBytes, &L.PeekLines, &L.PeekBytes, &L.MaxValueSize,
		&L.MaxRunBytes, &L.MaxRunValues, &L.MaxLookups, &L.MaxLookupBytes, &L.MaxStepBytes, &L.MaxExpandBytes} {
		*p = retain.Setting(*p)
	}
	for name, dst := range map[string]*time.Duration{"grace": &L.Grace, "max-age": &r.MaxAge} {
		v := values[name]
		d, e := ParseDuration(v.Text)
		if e != nil {
			return nil, bad(v, e)
		}
		*dst = d
	}
	L.Grace = time.Duration(retain.Setting(int64(L.Grace)))
	r.RunsDir = values["runs-dir"].Text
	if v := values["store"]; v.Text != "" {
		if !retain.IsObjectStore(v.Text) {
			return nil, bad(v, fmt.Errorf("store %q is not an s3://BUCKET/PREFIX address (a local store is --runs-dir)", v.Text))
		}
		r.Store = v.Text
	}
	r.Run = values["run"].Text
	switch v := values["policy"]; v.Text {
	case "legacy", "bounded":
		r.Policy = retain.Policy(v.Text)
	default:
		return nil, bad(v, fmt.Errorf("invalid policy %q: want legacy or bounded", v.Text))
	}
	rm, e := retain.ParseReadMore(values["read-more"].Text)
	if e != nil {
		return nil, bad(values["read-more"], e)
	}
	r.ReadMore = rm
	switch v := values["compress"]; v.Text {
	case "none", "zstd", "auto":
		r.Compress = v.Text
	default:
		return nil, bad(v, fmt.Errorf("invalid compression %q: want none, zstd or auto", v.Text))
	}
	return r, nil
}
