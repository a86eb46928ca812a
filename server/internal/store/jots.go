package store

// JotStore holds jots: their settings, files and pending uploads.
type JotStore interface {
}
