package stan

// operatorSigs returns the built-in signatures of this group (see Builtins).
func operatorSigs() []Sig { return nil }
