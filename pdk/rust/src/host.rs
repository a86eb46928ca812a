//! Settings, logging and progress: the host services besides HTTP.

use crate::sys;

/// config returns a setting from the host: "base_url", one of the plugin's
/// declared settings, or a non-secret field of the caller's connection.
/// None when it has no value. Bytes that are not UTF-8 are replaced.
pub fn config(key: &str) -> Option<String> {
    sys::config_get_bytes(key).map(|b| match String::from_utf8(b) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// base_url returns the effective API base URL without a trailing slash:
/// the operator's override, or else the manifest's baseUrl. None when
/// neither is set.
pub fn base_url() -> Option<String> {
    let v = config("base_url")?;
    let trimmed = v.trim_end_matches('/');
    if trimmed.is_empty() {
        None
    } else {
        Some(trimmed.to_string())
    }
}

/// Level is a log record's level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Debug = 0,
    Info = 1,
    Warn = 2,
    Error = 3,
}

/// log writes one record to the plugin's log. The host truncates messages
/// over 4 KiB.
pub fn log(level: Level, message: &str) {
    sys::log_message(level as i32, message);
}

/// log_debug writes a debug record.
pub fn log_debug(message: &str) {
    log(Level::Debug, message)
}

/// log_info writes an info record.
pub fn log_info(message: &str) {
    log(Level::Info, message)
}

/// log_warn writes a warning record.
pub fn log_warn(message: &str) {
    log(Level::Warn, message)
}

/// log_error writes an error record.
pub fn log_error(message: &str) {
    log(Level::Error, message)
}

/// progress reports progress of the running call; total 0 means unknown.
/// The host forwards it when the client asked for progress.
pub fn progress(done: f64, total: f64, message: &str) {
    sys::progress_report(done, total, message);
}
