package stan

// odeSigs returns the built-in signatures of this group (see Builtins).
func odeSigs() []Sig { return nil }
