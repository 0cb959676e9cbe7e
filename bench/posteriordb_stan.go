package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/stan"
	"github.com/vigo-bayes/vigo/zoo"
)

// The posteriordb benchmark's second source of models (issue 15 item 6): every posterior with
// reference draws — the 12 of ../shared/data/posteriordb and the further ones of
// posteriordb-full — compiled from its Stan program by package stan, with no Go code per model.

// Sources of models for Config.Source.
const (
	SourceZoo  = "zoo"  // the hand-written models of package zoo (the default)
	SourceStan = "stan" // each posterior's Stan program, compiled by package stan
)

// StanReferencePosteriors lists the posteriors that have reference draws in dir/draws or
// full/draws (posteriordb names, sorted, each once).
func StanReferencePosteriors(dir, full string) ([]string, error) {
	var names []string
	for _, d := range []string{dir, full} {
		if d == "" {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(d, "draws"))
		if err != nil {
			return nil, fmt.Errorf("bench: StanReferencePosteriors: %w", err)
		}
		for _, e := range ents {
			if n, ok := strings.CutSuffix(e.Name(), ".json.zip"); ok {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// stanPosterior compiles the Stan program of the posteriordb posterior name (a zoo short name
// is mapped to its posterior) with its data and returns it as a zoo.Model whose reported
// quantities are the reference draws' variables in the posterior's dimensions, with the
// directory holding its reference draws.
func stanPosterior(dir, full, name string) (*zoo.Model, string, error) {
	if info, err := zoo.Get(name); err == nil {
		name = info.Posterior
	}
	def, err := model.LoadPosteriorInfo(filepath.Join(full, "posteriors", name+".json"))
	if err != nil {
		return nil, "", fmt.Errorf("bench: stan source: %w", err)
	}
	prog := filepath.Join(full, "models", def.ModelName+".stan")
	src, err := os.ReadFile(prog)
	if err != nil {
		return nil, "", fmt.Errorf("bench: stan source: %w", err)
	}
	info := zoo.Info{Name: name, Posterior: name, Data: def.DataName,
		Description: "Stan program " + def.ModelName + ".stan compiled by vigo (posteriordb-full)"}
	drawsDir := ""
	for _, d := range []string{dir, full} {
		if _, err := os.Stat(info.DrawsPath(d)); err == nil {
			drawsDir = d
			break
		}
	}
	if drawsDir == "" {
		return nil, "", fmt.Errorf("bench: stan source: posterior %s has no reference draws in %s or %s", name, dir, full)
	}
	data, err := model.LoadData(info.DataPath(drawsDir))
	if err != nil {
		return nil, "", fmt.Errorf("bench: stan source: %w", err)
	}
	m, err := stan.Compile(prog, src, data)
	if err != nil {
		return nil, "", fmt.Errorf("bench: stan source: posterior %s: %w", name, err)
	}
	all, err := model.LoadDraws(info.DrawsPath(drawsDir))
	if err != nil {
		return nil, "", fmt.Errorf("bench: stan source: %w", err)
	}
	var reported []string
	for _, n := range all.Names {
		base, _, _ := strings.Cut(n, "[")
		if _, ok := def.Dimensions[base]; ok {
			reported = append(reported, n)
		}
	}
	zm, err := zoo.FromModel(info, m, reported)
	if err != nil {
		return nil, "", fmt.Errorf("bench: stan source: %w", err)
	}
	return zm, drawsDir, nil
}
