package jots

import (
	"net/http"
	"path"
	"strings"
)

// contentTypes maps extensions to content types: a fixed table, so a jot
// is served the same on every host whatever its mime files say.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8", ".htm": "text/html; charset=utf-8",
	".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
	".json": "application/json", ".map": "application/json", ".webmanifest": "application/manifest+json",
	".txt": "text/plain; charset=utf-8", ".md": "text/markdown; charset=utf-8", ".csv": "text/csv; charset=utf-8",
	".tsv": "text/tab-separated-values; charset=utf-8", ".xml": "application/xml", ".svg": "image/svg+xml",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".avif": "image/avif", ".ico": "image/x-icon", ".bmp": "image/bmp",
	".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf",
	".wasm": "application/wasm", ".bin": "application/octet-stream", ".pdf": "application/pdf", ".zip": "application/zip", ".gz": "application/gzip",
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".mp4": "video/mp4", ".webm": "video/webm",
	".geojson": "application/geo+json", ".yaml": "application/yaml", ".yml": "application/yaml",
}

// ContentType returns the content type a jot file is served with: by
// extension from a fixed table, else sniffed from its first bytes.
func ContentType(p string, data []byte) string {
	if ct, ok := contentTypes[strings.ToLower(path.Ext(p))]; ok {
		return ct
	}
	return http.DetectContentType(data)
}
