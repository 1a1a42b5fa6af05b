package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/retval/retval/pkg/config"
)

// sample is a valid value, other than the default, for each kind of
// setting (and for the settings that take one of a few words).
func sample(s config.Setting) string {
	switch s.Flag {
	case "policy":
		return "bounded"
	case "compress":
		return "zstd"
	case "read-more":
		return "shell"
	case "run":
		return "r7"
	case "runs-dir":
		return "elsewhere"
	case "store":
		return "s3://bucket/prefix"
	}
	switch s.Kind {
	case config.Size:
		return "3KiB"
	case config.Int:
		return "3"
	case config.Duration:
		return "2h"
	case config.Bool:
		return "true"
	}
	return "x"
}

type configRow struct {
	Setting, Value, Source, Env, Key string
}

// configRows runs retval config and returns its rows by setting.
func configRows(t *testing.T, args ...string) map[string]configRow {
	t.Helper()
	code, stdout, stderr := run(t, "", append([]string{"config"}, args...)...)
	if code != 0 {
		t.Fatalf("retval config %v: exit %d: %s", args, code, stderr)
	}
	var out struct{ Settings []configRow }
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("retval config %v: %v\n%s", args, err, stdout)
	}
	rows := map[string]configRow{}
	for _, r := range out.Settings {
		rows[r.Setting] = r
	}
	return rows
}

func cleanEnv(t *testing.T) {
	for _, s := range config.Settings {
		t.Setenv(s.Env(), "")
	}
}

// TestConfigProvenance: for every setting, retval config reports the
// value and the source it came from — default, config file (TOML and
// YAML), environment, flag — and the precedence flag > env > file.
func TestConfigProvenance(t *testing.T) {
	cleanEnv(t)
	rows := configRows(t, "--json")
	if len(rows) != len(config.Settings) {
		t.Errorf("retval config lists %d settings, want all %d", len(rows), len(config.Settings))
	}
	for _, s := range config.Settings {
		if s.Flag == "json" {
			continue // given as a flag here
		}
		if r := rows[s.Flag]; r.Source != "default" || r.Value != s.Default || r.Env != s.Env() || r.Key != s.Key() {
			t.Errorf("%s: %+v, want its default %q from default", s.Flag, r, s.Default)
		}
	}
	for _, s := range config.Settings {
		t.Run(s.Flag, func(t *testing.T) {
			cleanEnv(t)
			v := sample(s)
			jsonFlag := []string{"--json"}
			if s.Flag == "json" {
				jsonFlag = nil // the setting itself asks for JSON
			}
			check := func(how string, rows map[string]configRow, value, source string) {
				t.Helper()
				if r := rows[s.Flag]; r.Value != value || r.Source != source {
					t.Errorf("%s: %s = %q from %s, want %q from %s", how, s.Flag, r.Value, r.Source, value, source)
				}
			}
			dir := t.TempDir()
			if s.Flag != "config" { // a config file does not name another
				toml := filepath.Join(dir, "c.toml")
				yaml := filepath.Join(dir, "c.yaml")
				writeFile(t, toml, s.Key()+" = "+tomlValue(s, v)+"\n")
				writeFile(t, yaml, s.Key()+": "+v+"\n")
				check("toml", configRows(t, append(jsonFlag, "--config", toml)...), v, "config")
				check("yaml", configRows(t, append(jsonFlag, "--config", yaml)...), v, "config")
				// The environment beats the file.
				env := v
				if s.Kind == config.Bool {
					env = "1"
				}
				t.Setenv(s.Env(), env)
				check("env over file", configRows(t, append(jsonFlag, "--config", toml)...), env, "env")
			} else {
				t.Setenv(s.Env(), filepath.Join(dir, "none.toml"))
				writeFile(t, filepath.Join(dir, "none.toml"), "")
				check("env", configRows(t, "--json"), filepath.Join(dir, "none.toml"), "env")
			}
			// A flag beats the environment.
			flagValue := v
			if s.Kind == config.Bool {
				check("flag", configRows(t, "--json", "--"+s.Flag), "true", "flag")
				return
			}
			if s.Flag == "config" {
				flagValue = filepath.Join(dir, "other.toml")
				writeFile(t, flagValue, "")
			}
			check("flag over env", configRows(t, "--json", "--"+s.Flag, flagValue), flagValue, "flag")
		})
	}
}

func tomlValue(s config.Setting, v string) string {
	if s.Kind == config.Int || s.Kind == config.Bool {
		return v
	}
	return `"` + v + `"`
}

func writeFile(t *testing.T, name, text string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestConfigCoversEveryEnvVar: every RETVAL_* variable a command's help
// mentions is a setting that retval config shows — except RETVAL_NOW, gc's
// clock for tests, which is not a setting.
func TestConfigCoversEveryEnvVar(t *testing.T) {
	cleanEnv(t)
	rows := configRows(t, "--json")
	var envs []string
	for _, r := range rows {
		envs = append(envs, r.Env)
	}
	re := regexp.MustCompile(`RETVAL_[A-Z_]+`)
	app := newApp(&env{})
	for _, c := range app.VisibleCommands() {
		_, help, _ := run(t, "", c.Name, "--help")
		for _, v := range re.FindAllString(help, -1) {
			if v != "RETVAL_NOW" && !slices.Contains(envs, v) {
				t.Errorf("retval %s --help mentions %s, which retval config does not show", c.Name, v)
			}
		}
		// And every setting flag of the command is one config shows.
		for _, f := range c.Flags {
			if s, ok := config.Lookup(f.Names()[0]); ok {
				if _, ok := rows[s.Flag]; !ok {
					t.Errorf("retval %s --%s is a setting retval config does not show", c.Name, s.Flag)
				}
			}
		}
	}
}
