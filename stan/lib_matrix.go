package stan

// matrixSigs returns the built-in signatures of this group (see Builtins).
func matrixSigs() []Sig { return nil }
