package stan

// mathSigs returns the built-in signatures of this group (see Builtins).
func mathSigs() []Sig { return nil }
