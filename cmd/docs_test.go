package cmd

// The man pages under docs/man are rendered from the same command
// definitions as --help, and TestManPages fails when they are not current.
// Regenerate them with
//
//	go generate ./cmd
//
// which runs the test with -update.

//go:generate go test -run ^(TestManPages|TestHelpGolden)$ -update .

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/config"
	"github.com/urfave/cli/v3"
)

var update = flag.Bool("update", false, "rewrite golden files and docs/man")

const manDir = "../docs/man"

// manPages renders retval.1 and one retval-CMD.1 per visible command.
func manPages(app *cli.Command) map[string]string {
	pages := map[string]string{"retval.1": manMain(app)}
	for _, c := range app.VisibleCommands() {
		pages["retval-"+c.Name+".1"] = manCommand(app, c)
	}
	return pages
}

// helpSections splits a Description into its prose, its "Example:" block
// and its "Exit status:" text.
func helpSections(desc string) (prose, example, exit string) {
	prose = desc
	if i := strings.Index(prose, "\nExit status:"); i >= 0 {
		prose, exit = prose[:i], strings.TrimSpace(strings.TrimPrefix(prose[i+1:], "Exit status:"))
	}
	if i := strings.Index(prose, "\nExample:"); i >= 0 {
		prose, example = prose[:i], prose[i+len("\nExample:"):]
	} else if strings.HasPrefix(prose, "Example:") {
		prose, example = "", prose[len("Example:"):]
	}
	return strings.TrimSpace(prose), strings.Trim(example, "\n"), exit
}

// roff escapes text for a man page: backslashes, hyphens (as \-, so that
// a pasted option is an ASCII hyphen-minus) and a leading control
// character.
func roff(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r > 0x7e:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	s = b.String()
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffText renders help prose: paragraphs separated by blank lines are
// filled; lines indented by three spaces or more are kept as they are.
func roffText(b *strings.Builder, text string) {
	lines := strings.Split(text, "\n")
	literal := false
	for i, l := range lines {
		switch {
		case strings.TrimSpace(l) == "":
			if literal {
				b.WriteString(".fi\n.RE\n")
				literal = false
			}
			if i > 0 && i < len(lines)-1 {
				b.WriteString(".PP\n")
			}
		case strings.HasPrefix(l, "   "):
			if !literal {
				b.WriteString(".RS 4\n.nf\n")
				literal = true
			}
			b.WriteString(roff(strings.TrimPrefix(l, "   ")) + "\n")
		default:
			if literal {
				b.WriteString(".fi\n.RE\n")
				literal = false
			}
			b.WriteString(roff(l) + "\n")
		}
	}
	if literal {
		b.WriteString(".fi\n.RE\n")
	}
}

func manHeader(b *strings.Builder, name, summary string) {
	fmt.Fprintf(b, ".\\\" Generated from retval's command definitions by go generate ./cmd; do not edit.\n")
	fmt.Fprintf(b, ".TH %s 1 \"\" \"retval\" \"retval manual\"\n", roff(strings.ToUpper(name)))
	b.WriteString(".nh\n.ad l\n") // no hyphenation, ragged right: names and flags stay whole
	fmt.Fprintf(b, ".SH NAME\n%s \\- %s\n", roff(name), roff(summary))
}

func manExamplesAndExit(b *strings.Builder, example, exit string) {
	if example != "" {
		b.WriteString(".SH EXAMPLES\n")
		roffText(b, example)
	}
	if exit != "" {
		b.WriteString(".SH EXIT STATUS\n")
		roffText(b, exit)
	}
}

func manMain(app *cli.Command) string {
	var b strings.Builder
	manHeader(&b, "retval", app.Usage)
	b.WriteString(".SH SYNOPSIS\n.nf\nretval \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGUMENTS\\fR]\nretval \\-\\-help | \\-\\-version\n.fi\n")
	prose, example, exit := helpSections(app.Description)
	b.WriteString(".SH DESCRIPTION\n")
	roffText(&b, prose)
	b.WriteString(".SH COMMANDS\n")
	for _, c := range app.VisibleCommands() {
		fmt.Fprintf(&b, ".TP\n.B %s\n%s; see \\fBretval\\-%s\\fR(1).\n", roff(c.Name), roff(c.Usage), roff(c.Name))
	}
	b.WriteString(".SH ENVIRONMENT\nEvery setting is a flag of the commands it concerns, an environment variable and a key of the configuration file (TOML or YAML) named by \\fB\\-\\-config\\fR or \\fBRETVAL_CONFIG\\fR, with precedence flag > environment > configuration file > default.\n\\fBretval config\\fR prints each setting's effective value and its source.\n")
	for _, s := range config.Settings {
		fmt.Fprintf(&b, ".TP\n.B %s\n", roff(s.Env()))
		fmt.Fprintf(&b, "%s (\\fB\\-\\-%s\\fR", roff(s.Usage), roff(s.Flag))
		if s.Flag != "config" {
			fmt.Fprintf(&b, ", config key \\fB%s\\fR", roff(s.Key()))
		}
		if s.Default != "" {
			fmt.Fprintf(&b, ", default %s", roff(s.Default))
		}
		b.WriteString(").\n")
	}
	manExamplesAndExit(&b, example, exit)
	b.WriteString(".SH SEE ALSO\n")
	var refs []string
	for _, c := range app.VisibleCommands() {
		refs = append(refs, fmt.Sprintf("\\fBretval\\-%s\\fR(1)", roff(c.Name)))
	}
	b.WriteString(strings.Join(refs, ",\n") + "\n")
	return b.String()
}

func manCommand(app *cli.Command, c *cli.Command) string {
	var b strings.Builder
	manHeader(&b, "retval-"+c.Name, c.Usage)
	b.WriteString(".SH SYNOPSIS\n.nf\n")
	for _, l := range strings.Split(c.UsageText, "\n") {
		b.WriteString(roff(strings.TrimSpace(l)) + "\n")
	}
	b.WriteString(".fi\n")
	prose, example, exit := helpSections(c.Description)
	if prose != "" {
		b.WriteString(".SH DESCRIPTION\n")
		roffText(&b, prose)
	}
	b.WriteString(".SH OPTIONS\n")
	var env []config.Setting
	for _, f := range c.VisibleFlags() {
		d, ok := f.(cli.DocGenerationFlag)
		if !ok {
			continue
		}
		names := f.Names()
		head := `\-\-` + roff(names[0])
		for _, alias := range names[1:] {
			if len(alias) == 1 {
				head += `, \-` + roff(alias)
			} else {
				head += `, \-\-` + roff(alias)
			}
		}
		if d.TakesValue() {
			head += ` \fIvalue\fR`
		}
		fmt.Fprintf(&b, ".TP\n.B %s\n%s", head, roff(d.GetUsage()))
		if _, isBool := f.(*cli.BoolFlag); !isBool && flagDefault(f) != "" {
			fmt.Fprintf(&b, " (default: %s)", roff(flagDefault(f)))
		}
		b.WriteString("\n")
		if s, ok := config.Lookup(names[0]); ok {
			env = append(env, s)
		}
	}
	b.WriteString(".TP\n.B \\-\\-help, \\-h\nshow help\n")
	if len(env) > 0 {
		b.WriteString(".SH ENVIRONMENT\n")
		for _, s := range env {
			fmt.Fprintf(&b, ".TP\n.B %s\nas \\fB\\-\\-%s\\fR\n", roff(s.Env()), roff(s.Flag))
		}
	}
	manExamplesAndExit(&b, example, exit)
	fmt.Fprintf(&b, ".SH SEE ALSO\n\\fBretval\\fR(1), \\fBretval\\-config\\fR(1)\n")
	return b.String()
}

func TestManPages(t *testing.T) {
	pages := manPages(newApp(&env{}))
	if *update {
		old, _ := filepath.Glob(filepath.Join(manDir, "retval*.1"))
		for _, p := range old {
			if _, ok := pages[filepath.Base(p)]; !ok {
				os.Remove(p)
			}
		}
		if err := os.MkdirAll(manDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range pages {
			if err := os.WriteFile(filepath.Join(manDir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	have, _ := filepath.Glob(filepath.Join(manDir, "retval*.1"))
	for _, p := range have {
		if _, ok := pages[filepath.Base(p)]; !ok {
			t.Errorf("%s documents no current command; run go generate ./cmd", p)
		}
	}
	for name, text := range pages {
		b, err := os.ReadFile(filepath.Join(manDir, name))
		if err != nil || string(b) != text {
			t.Errorf("docs/man/%s is not current; run go generate ./cmd", name)
		}
	}
}

// TestManPagesRender: groff reads every page without a warning, and the
// rendered text keeps the examples pasteable (ASCII hyphens, no
// hyphenation inside them).
func TestManPagesRender(t *testing.T) {
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skip("groff not installed")
	}
	for name, text := range manPages(newApp(&env{})) {
		cmd := exec.Command("groff", "-man", "-Tutf8", "-ww", "-rLL=200n", "-P", "-cbou")
		cmd.Stdin = strings.NewReader(text)
		var errb strings.Builder
		cmd.Stderr = &errb
		out, err := cmd.Output()
		if err != nil || errb.Len() > 0 {
			t.Errorf("%s: groff: %v %s", name, err, errb.String())
			continue
		}
		rendered := string(out)
		if !strings.Contains(rendered, "EXIT STATUS") || !strings.Contains(rendered, "NAME") {
			t.Errorf("%s: rendered page lacks its sections:\n%s", name, rendered)
		}
		if name != "retval.1" && !strings.Contains(rendered, "EXAMPLES") {
			t.Errorf("%s: no EXAMPLES section", name)
		}
		for _, l := range strings.Split(rendered, "\n") {
			if strings.Contains(l, "retval ") && strings.ContainsAny(l, "\u2010\u2212") {
				t.Errorf("%s: a command line renders with a non-ASCII hyphen: %q", name, l)
			}
		}
	}
}

// TestHelpGolden: the help of retval and of every command, as printed.
// Changing a definition shows up as a diff here; accept it with -update.
func TestHelpGolden(t *testing.T) {
	app := newApp(&env{})
	targets := [][]string{{"--help"}}
	for _, c := range app.VisibleCommands() {
		targets = append(targets, []string{c.Name, "--help"})
	}
	want := map[string]bool{}
	for _, args := range targets {
		name := "retval"
		if len(args) > 1 {
			name = args[0]
		}
		file := filepath.Join("testdata", "help", name+".txt")
		want[file] = true
		code, stdout, stderr := run(t, "", args...)
		if code != 0 || stderr != "" {
			t.Fatalf("retval %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		if *update {
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil || string(b) != stdout {
			t.Errorf("retval %s: help differs from %s (run go generate ./cmd to accept):\n%s", strings.Join(args, " "), file, stdout)
		}
	}
	have, _ := filepath.Glob(filepath.Join("testdata", "help", "*.txt"))
	for _, f := range have {
		if !want[f] && !*update {
			t.Errorf("%s: no such command any more; run go generate ./cmd", f)
		} else if !want[f] {
			os.Remove(f)
		}
	}
}

// TestHelpContent: what every command's help must hold, whoever writes
// the command: a one-line summary in retval --help, usage, an example that
// uses only the command's own flags, the exit status, and for each
// setting its environment variable and default.
func TestHelpContent(t *testing.T) {
	app := newApp(&env{})
	_, top, _ := run(t, "", "--help")
	for _, c := range app.VisibleCommands() {
		t.Run(c.Name, func(t *testing.T) {
			if c.Usage == "" || strings.Contains(c.Usage, "\n") {
				t.Errorf("summary %q: want one line", c.Usage)
			}
			if !strings.Contains(top, "   "+c.Name+" ") || !strings.Contains(top, c.Usage) {
				t.Errorf("retval --help does not list %s with its summary", c.Name)
			}
			code, help, _ := run(t, "", c.Name, "--help")
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			for _, want := range []string{"USAGE:\n   retval " + c.Name, "\n   Example:\n", "\n   Exit status: ", "OPTIONS:"} {
				if !strings.Contains(help, want) {
					t.Errorf("help lacks %q", want)
				}
			}
			for _, f := range c.Flags {
				s, ok := config.Lookup(f.Names()[0])
				if !ok {
					continue
				}
				line := helpLine(help, "--"+s.Flag+" ")
				if !strings.Contains(line, "env "+s.Env()) || !strings.Contains(line, "config "+s.Key()) {
					t.Errorf("--%s: help line lacks its environment variable and config key: %q", s.Flag, line)
				}
				if s.Kind != config.Bool && s.Default != "" && !strings.Contains(line, "(default: "+s.Default+")") {
					t.Errorf("--%s: help line lacks its default %s: %q", s.Flag, s.Default, line)
				}
			}
			_, example, _ := helpSections(c.Description)
			n := 0
			for _, cmdline := range exampleCommands(example) {
				if cmdline[0] != c.Name {
					continue
				}
				n++
				for _, a := range cmdline[1:] {
					if a == "--" {
						break // what follows is another program's
					}
					if !strings.HasPrefix(a, "-") || a == "-" || strings.Trim(a[1:], "0123456789") == "" {
						continue // not a flag: a word, stdin, or a range -N
					}
					name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
					if name == "help" || name == "h" {
						continue
					}
					if commandFlagOf(c, name) == nil {
						t.Errorf("example %q uses %s, which is not a flag of %s", strings.Join(cmdline, " "), a, c.Name)
					}
				}
			}
			if n == 0 {
				t.Errorf("no example runs retval %s:\n%s", c.Name, example)
			}
		})
	}
}

// helpLine returns the OPTIONS line of a flag.
func helpLine(help, flag string) string {
	_, options, _ := strings.Cut(help, "\nOPTIONS:\n")
	for _, l := range strings.Split(options, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), flag) {
			return l
		}
	}
	return ""
}

// exampleCommands returns the retval invocations in an example block: the
// words after each "retval", up to a pipe or redirection, with quotes
// removed.
func exampleCommands(example string) [][]string {
	var out [][]string
	for _, l := range strings.Split(example, "\n") {
		words := strings.Fields(l)
		for i, w := range words { // source <(retval …), $(retval …)
			words[i] = strings.TrimPrefix(strings.TrimPrefix(w, "<("), "$(")
		}
		for i := 0; i < len(words); i++ {
			if words[i] != "retval" || i+1 >= len(words) {
				continue
			}
			var cmd []string
			for _, w := range words[i+1:] {
				if slices.Contains([]string{"|", "<", ">", "&&", "||", ";"}, w) {
					break
				}
				cmd = append(cmd, strings.Trim(w, `'")`))
			}
			out = append(out, cmd)
		}
	}
	return out
}

// TestExampleCommands checks the example parser itself.
func TestExampleCommands(t *testing.T) {
	got := exampleCommands(`   go test ./... 2>&1 | retval retain --run "$RUN" --call x
   # crontab: 17 3 * * * retval gc --max-age 14d
   echo '[]' | retval resolve --batch < refs.json
   source <(retval completion bash)`)
	want := [][]string{
		{"retain", "--run", "$RUN", "--call", "x"},
		{"gc", "--max-age", "14d"},
		{"resolve", "--batch"},
		{"completion", "bash"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestReadmeLinks: every link of README.md names a file that exists, and
// each list item of README's "More" names a different document (it once
// listed docs/RELIABILITY.md twice). The README opens with the two
// commands a fresh machine runs: the demo and .ci/run.
func TestReadmeLinks(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	link := regexp.MustCompile(`\]\(([^)#]+)(#[^)]*)?\)`)
	listed := map[string]int{}
	for _, line := range strings.Split(readme, "\n") {
		for _, m := range link.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join("..", target)); err != nil {
				t.Errorf("README links %s: %v", target, err)
			}
			if strings.HasPrefix(line, "- [") && strings.HasPrefix(line[3:], target+"]") {
				listed[target]++
			}
		}
	}
	for target, n := range listed {
		if n > 1 {
			t.Errorf("README's list names %s %d times", target, n)
		}
	}
	first := strings.Index(readme, "```sh\n")
	if first < 0 || !strings.HasPrefix(readme[first+6:], "./scripts/demo") || !strings.Contains(readme[first:first+400], "\n.ci/run") {
		t.Errorf("README's first code block is not the demo and .ci/run")
	}
}
