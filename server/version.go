package server

import (
	"runtime/debug"
	"sync"
)

// Version is the server's version as MCP clients see it: the module
// version of a released build, else the VCS revision it was built from
// ("devel+<12 hex>", with "+dirty" for uncommitted changes), else "devel".
var Version = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionOf(info)
})

func versionOf(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	version := "devel"
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			version += "+" + s.Value[:12]
		}
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.modified" && s.Value == "true" && version != "devel" {
			version += "+dirty"
		}
	}
	return version
}
