package cli

import (
	"reflect"
	"testing"

	"github.com/vigo-bayes/vigo/fit"
)

// vigo fit --recipe reads the example file of the BF-VI paper's recipe as fit.BFVIPaperRecipe.
func TestReadRecipeBFVIPaper(t *testing.T) {
	r, err := readRecipe("../examples/recipes/bfvi_paper.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := fit.BFVIPaperRecipe(); !reflect.DeepEqual(r, want) {
		t.Errorf("read %+v, want %+v", r, want)
	}
}
