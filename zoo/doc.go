// Package zoo holds ready-made models: the 12 posteriordb posteriors as Go targets.
package zoo
