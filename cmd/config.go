package cmd

import (
	"fmt"
	"text/tabwriter"

	"github.com/retval/retval/pkg/config"
	"github.com/urfave/cli/v3"
)

func init() { register("config", configCommand) }

func configCommand() *cli.Command {
	var names []string
	for _, s := range config.Settings {
		names = append(names, s.Flag)
	}
	var o opts
	return &cli.Command{
		Name:      "config",
		Usage:     "show the effective value of every setting and where it came from",
		UsageText: "retval config [--SETTING VALUE]... [--json]",
		Description: `Prints every setting with its effective value and its source: flag,
env (RETVAL_*), config (with the file it came from: the --config file, or
without one the user's $XDG_CONFIG_HOME/retval/config.toml, by default
~/.config/retval/config.toml) or default. Precedence is
flag > env > config file > user file > default. Answers "why was this not
retained?".

Example:
   RETVAL_THRESHOLD=4KiB retval config --config retval.toml

Exit status: 0 printed, 2 a setting has a bad value.`,
		Flags: flagsExcept(names, "config", "json"),
		Action: action(&o, func(e *env) error {
			r, err := o.settings(e)
			if err != nil {
				return err
			}
			if r.JSON {
				type row struct {
					Setting string `json:"setting"`
					Value   string `json:"value"`
					Source  string `json:"source"`
					File    string `json:"file,omitempty"`
					Env     string `json:"env"`
					Key     string `json:"key"`
				}
				var rows []row
				for _, s := range config.Settings {
					v := r.Values[s.Flag]
					rows = append(rows, row{s.Flag, v.Text, string(v.Source), v.File, s.Env(), s.Key()})
				}
				return writeJSON(e.stdout, map[string]any{"settings": rows})
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SETTING\tVALUE\tSOURCE\tENV")
			for _, s := range config.Settings {
				v := r.Values[s.Flag]
				src := string(v.Source)
				if v.File != "" {
					src += " " + v.File
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Flag, v.Text, src, s.Env())
			}
			return tw.Flush()
		}),
	}
}

// flagsExcept returns the flags of all named settings, putting the global
// ones first.
func flagsExcept(names []string, first ...string) []cli.Flag {
	seen := map[string]bool{}
	var order []string
	for _, n := range append([]string{"runs-dir", "run"}, first...) {
		seen[n] = true
		order = append(order, n)
	}
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			order = append(order, n)
		}
	}
	return flags(order...)
}
