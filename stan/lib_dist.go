package stan

// distSigs returns the built-in signatures of this group (see Builtins).
func distSigs() []Sig { return nil }
