package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/stan"
	"github.com/vigo-bayes/vigo/zoo"
)

// Model is a model of the caller's for the command line: vigo fit NAME, vigo sample NAME and
// vigo draw find it by Name beside the zoo's models, and write its columns (parameters, then
// its derived quantities) into every output file.
type Model struct {
	Name  string // what the commands call it; not a zoo model's name
	About string // one line for vigo zoo
	// New builds the model from its data: the --data file (CmdStan JSON, .json.zip, or CSV
	// with a header), else Data. It is called once per command.
	New func(data *model.Data) (*model.Model, error)
	// Data are the model's built-in data, used without --data (nil: --data is needed, unless
	// New ignores its data).
	Data *model.Data
}

// registry holds the caller's models by name.
type registry struct {
	models []Model
}

func newRegistry(models []Model) (*registry, error) {
	seen := map[string]bool{}
	for i, m := range models {
		switch {
		case m.Name == "" || strings.ContainsAny(m.Name, " \t\n/"):
			return nil, fmt.Errorf("cli: model %d: name %q, want a non-empty word", i, m.Name)
		case m.New == nil:
			return nil, fmt.Errorf("cli: model %s: New is nil", m.Name)
		case seen[m.Name]:
			return nil, fmt.Errorf("cli: model %s: two models with this name", m.Name)
		}
		if _, err := zoo.Get(m.Name); err == nil {
			return nil, fmt.Errorf("cli: model %s: a zoo model has this name", m.Name)
		}
		seen[m.Name] = true
	}
	return &registry{models: models}, nil
}

// user returns the caller's model called name.
func (r *registry) user(name string) (Model, bool) {
	for _, m := range r.models {
		if m.Name == name {
			return m, true
		}
	}
	return Model{}, false
}

// loadedModel is a model ready to fit, with what the output files say about it.
type loadedModel struct {
	*model.Model
	Name      string
	Posterior string     // posteriordb name ("" for a caller's model)
	data      string     // where the data came from: a path, "embedded" or "built-in"
	zoo       *zoo.Model // the zoo model (nil for a caller's model)
}

// LogDensityBatch is the zoo model's batched log density (model.BatchTarget), so that vigo fit
// takes the path the library takes on the same zoo model (fit.Run with a *zoo.Model); ok is
// false for the caller's models, Stan programs and zoo models without a batched form. The
// zoo model and m.Model share the data and the Jacobian setting.
func (m *loadedModel) LogDensityBatch(t *ad.Tape, Z ad.Var) (ad.Var, bool) {
	if m.zoo == nil || m.Model.NoJacobian != !m.zoo.Jacobian() {
		return ad.Var{}, false
	}
	return m.zoo.LogDensityBatch(t, Z)
}

// load builds the model called name: the caller's, from --data or its built-in data; or the
// zoo's, from --data, the embedded eight-schools data, or the posteriordb directory (flag,
// environment, checkout; see datadir.PosteriorDB), in that order.
func (r *registry) load(name, dataPath, posteriordb string) (*loadedModel, error) {
	if strings.HasSuffix(name, ".stan") {
		return loadStan(name, dataPath)
	}
	if um, ok := r.user(name); ok {
		data, src := um.Data, "built-in"
		if dataPath != "" {
			d, err := loadDataFile(dataPath)
			if err != nil {
				return nil, fmt.Errorf("--data: %w", err)
			}
			data, src = d, dataPath
		}
		m, err := um.New(data)
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", name, err)
		}
		if m == nil || m.Layout == nil {
			return nil, fmt.Errorf("model %s: New returned no model or no layout", name)
		}
		if err := m.Check(); err != nil {
			return nil, fmt.Errorf("model %s: %w", name, err)
		}
		return &loadedModel{Model: m, Name: name, data: src}, nil
	}
	info, err := zoo.Get(name)
	if err != nil {
		if len(r.models) > 0 {
			return nil, fmt.Errorf("%w (or one of this program's models: %s)", err, strings.Join(r.names(), ", "))
		}
		return nil, err
	}
	zm, src := (*zoo.Model)(nil), ""
	switch {
	case dataPath != "":
		d, err := loadDataFile(dataPath)
		if err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
		if zm, err = zoo.New(info.Name, d); err != nil {
			return nil, fmt.Errorf("--data %s: %w", dataPath, err)
		}
		src = dataPath
	case info.Name == "eight_schools":
		zm, src = zoo.EightSchools(), "embedded"
	default:
		dir, _, err := datadir.PosteriorDB(posteriordb)
		if err != nil {
			return nil, fmt.Errorf("model %s: no data: pass --data FILE, or %w", info.Name, err)
		}
		if zm, err = zoo.Load(info.Name, dir); err != nil {
			return nil, err
		}
		src = info.DataPath(dir)
	}
	return &loadedModel{Model: zm.Model(), Name: zm.Name, Posterior: zm.Posterior, data: src, zoo: zm}, nil
}

// loadStan compiles the Stan program at path with the --data file (none: a program without
// data). The model is named by the file's base name without ".stan".
func loadStan(path, dataPath string) (*loadedModel, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var data *model.Data
	from := "none"
	if dataPath != "" {
		if data, err = loadDataFile(dataPath); err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
		from = dataPath
	}
	m, err := stan.Compile(path, src, data)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(filepath.Base(path), ".stan")
	return &loadedModel{Model: m, Name: name, data: from}, nil
}

func (r *registry) names() []string {
	var out []string
	for _, m := range r.models {
		out = append(out, m.Name)
	}
	return out
}

// loadDataFile reads CmdStan JSON (plain or zipped) or, for a .csv name, CSV with a header.
func loadDataFile(path string) (*model.Data, error) {
	if strings.HasSuffix(strings.ToLower(path), ".csv") || strings.HasSuffix(strings.ToLower(path), ".csv.zip") {
		return model.LoadCSV(path)
	}
	return model.LoadData(path)
}

// label names the model in file headers: its posteriordb name, else its name.
func (m *loadedModel) label() string {
	if m.Posterior != "" {
		return m.Posterior
	}
	return m.Name
}
