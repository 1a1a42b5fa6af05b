//go:build ignore

// report turns the hyperfine exports of bench/run into docs/BENCHMARKS.md
// and a JSON summary for tracking.
//
//	go run bench/report.go WORKDIR OUT.md OUT.json
//
// WORKDIR holds manifest.tsv (one row per comparison: id, title, goal,
// goal ratio, retval command name, baseline command name, hyperfine json
// file), rss.tsv (command name, peak RSS in KiB) and machine.txt.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

type result struct {
	Command string    `json:"command"`
	Median  float64   `json:"median"`
	Min     float64   `json:"min"`
	Max     float64   `json:"max"`
	Times   []float64 `json:"times"`
}

type row struct {
	ID        string  `json:"id"`
	Title     string  `json:"title"`
	Retval    string  `json:"retval"`
	Baseline  string  `json:"baseline"`
	RetvalMed float64 `json:"retval_median_s"`
	RetvalMin float64 `json:"retval_min_s"`
	RetvalMax float64 `json:"retval_max_s"`
	BaseMed   float64 `json:"baseline_median_s"`
	BaseMin   float64 `json:"baseline_min_s"`
	BaseMax   float64 `json:"baseline_max_s"`
	Ratio     float64 `json:"ratio"` // baseline median ÷ retval median: > 1 means retval is faster
	Goal      string  `json:"goal"`
	GoalRatio float64 `json:"goal_ratio"`
	Met       bool    `json:"met"`
	RetvalRSS int64   `json:"retval_rss_kib,omitempty"`
	BaseRSS   int64   `json:"baseline_rss_kib,omitempty"`
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: go run bench/report.go WORKDIR OUT.md OUT.json")
		os.Exit(2)
	}
	work := os.Args[1]
	rss := readRSS(filepath.Join(work, "rss.tsv"))
	var rows []row
	for _, f := range readTSV(filepath.Join(work, "manifest.tsv")) {
		if len(f) != 7 {
			continue
		}
		goal, _ := strconv.ParseFloat(f[3], 64)
		res := readResults(filepath.Join(work, f[6]))
		rv, okr := res[f[4]]
		bl, okb := res[f[5]]
		if !okr || !okb {
			fmt.Fprintf(os.Stderr, "report: %s: missing %q or %q in %s\n", f[0], f[4], f[5], f[6])
			continue
		}
		r := row{ID: f[0], Title: f[1], Goal: f[2], GoalRatio: goal, Retval: f[4], Baseline: f[5],
			RetvalMed: rv.Median, RetvalMin: rv.Min, RetvalMax: rv.Max,
			BaseMed: bl.Median, BaseMin: bl.Min, BaseMax: bl.Max,
			RetvalRSS: rss[f[4]], BaseRSS: rss[f[5]]}
		r.Ratio = bl.Median / rv.Median
		r.Met = r.Ratio >= goal
		rows = append(rows, r)
	}
	machine, _ := os.ReadFile(filepath.Join(work, "machine.txt"))
	extra, _ := os.ReadFile(filepath.Join(work, "extra.md"))

	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmarks\n\nretval against what a user would run instead, measured side by side in one\nrun of `bench/run` (hyperfine, warm caches, medians of several runs).\nRegenerate with `bench/run` (full) or `bench/run --quick` (small data).\n\n")
	fmt.Fprintf(&b, "Measured %s on: %s\n\n", time.Now().UTC().Format("2006-01-02"), strings.TrimSpace(string(machine)))
	b.WriteString("Ratio = baseline median ÷ retval median (above 1: retval is faster). Peak RSS from GNU time.\n\n")
	b.WriteString("| comparison | retval median (min–max) | baseline | baseline median (min–max) | ratio | goal | met | RSS retval / baseline |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		met := "yes"
		if r.GoalRatio == 0 {
			met = "–"
		} else if !r.Met {
			met = "**no**"
		}
		rs := ""
		if r.RetvalRSS > 0 || r.BaseRSS > 0 {
			rs = fmt.Sprintf("%s / %s", kib(r.RetvalRSS), kib(r.BaseRSS))
		}
		fmt.Fprintf(&b, "| %s | %s (%s–%s) | `%s` | %s (%s–%s) | %.2f× | %s | %s | %s |\n",
			cell(r.Title), dur(r.RetvalMed), dur(r.RetvalMin), dur(r.RetvalMax), cell(r.Baseline),
			dur(r.BaseMed), dur(r.BaseMin), dur(r.BaseMax), r.Ratio, cell(r.Goal), met, rs)
	}
	b.WriteString("\n")
	b.Write(extra)
	if err := os.WriteFile(os.Args[2], []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	j, _ := json.MarshalIndent(map[string]any{"date": time.Now().UTC().Format(time.RFC3339), "machine": strings.TrimSpace(string(machine)), "rows": rows}, "", "  ")
	if err := os.WriteFile(os.Args[3], append(j, '\n'), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// cell escapes a table cell's pipes.
func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

func dur(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.2f s", s)
	case s >= 0.001:
		return fmt.Sprintf("%.1f ms", s*1e3)
	}
	return fmt.Sprintf("%.0f µs", s*1e6)
}

func kib(k int64) string {
	if k == 0 {
		return "–"
	}
	if k >= 1024 {
		return fmt.Sprintf("%.1f MiB", float64(k)/1024)
	}
	return fmt.Sprintf("%d KiB", k)
}

func readTSV(p string) [][]string {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if t := sc.Text(); t != "" && !strings.HasPrefix(t, "#") {
			out = append(out, strings.Split(t, "\t"))
		}
	}
	return out
}

func readRSS(p string) map[string]int64 {
	m := map[string]int64{}
	for _, f := range readTSV(p) {
		if len(f) == 2 {
			n, _ := strconv.ParseInt(strings.TrimSpace(f[1]), 10, 64)
			m[f[0]] = n
		}
	}
	return m
}

func readResults(p string) map[string]result {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	var doc struct {
		Results []result `json:"results"`
	}
	json.Unmarshal(b, &doc)
	m := map[string]result{}
	for _, r := range doc.Results {
		if len(r.Times) > 0 {
			t := append([]float64(nil), r.Times...)
			sort.Float64s(t)
			r.Min, r.Max = t[0], t[len(t)-1]
		}
		m[r.Command] = r
	}
	return m
}
