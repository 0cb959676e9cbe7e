package stan

// rngSigs returns the built-in signatures of this group (see Builtins).
func rngSigs() []Sig { return nil }
