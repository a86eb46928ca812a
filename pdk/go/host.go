package pdk

import "fmt"

// Log levels of the log import.
const (
	levelDebug int32 = 0
	levelInfo  int32 = 1
	levelWarn  int32 = 2
	levelError int32 = 3
)

// Config returns a setting from the host: "base_url", one of the plugin's
// declared settings, or a non-secret field of the caller's connection. The
// boolean is false when the setting has no value.
func Config(key string) (string, bool) {
	return hostConfigGet(key)
}

// LogDebug writes a debug record to the plugin's log.
func LogDebug(format string, args ...any) { hostLog(levelDebug, fmt.Sprintf(format, args...)) }

// LogInfo writes an info record to the plugin's log.
func LogInfo(format string, args ...any) { hostLog(levelInfo, fmt.Sprintf(format, args...)) }

// LogWarn writes a warning record to the plugin's log.
func LogWarn(format string, args ...any) { hostLog(levelWarn, fmt.Sprintf(format, args...)) }

// LogError writes an error record to the plugin's log.
func LogError(format string, args ...any) { hostLog(levelError, fmt.Sprintf(format, args...)) }

// Progress reports progress of the running call; total 0 means unknown. The
// host forwards it when the client asked for progress.
func Progress(done, total float64, message string) {
	hostProgress(done, total, message)
}
