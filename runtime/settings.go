package runtime

import (
	"os"
	"strings"

	"github.com/workbench-dev/workbench/runtime/manifest"
)

// SettingsSource supplies operator settings: an integration's base URL
// override ("base_url") and the settings its manifest declares.
type SettingsSource interface {
	Setting(integration, name string) (string, bool)
}

// MapSettings is a SettingsSource backed by a map of integration to name to value.
type MapSettings map[string]map[string]string

// Setting implements SettingsSource.
func (m MapSettings) Setting(integration, name string) (string, bool) {
	v, ok := m[integration][name]
	return v, ok
}

// EnvSettings reads settings from the environment: `<NAME>_BASE_URL` for
// "base_url" and `<NAME>_<SETTING>` for the rest, where <NAME> is the
// integration name upper-cased with '-' as '_'. A nil Getenv means os.Getenv.
type EnvSettings struct {
	Getenv func(string) string
}

// Setting implements SettingsSource. Empty values count as unset.
func (e EnvSettings) Setting(integration, name string) (string, bool) {
	get := e.Getenv
	if get == nil {
		get = os.Getenv
	}
	v := get(manifest.EnvPrefix(integration) + "_" + strings.ToUpper(name))
	return v, v != ""
}
