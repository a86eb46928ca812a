//! workbench is the Rust plugin development kit for Workbench plugins: the
//! guest side of the ABI in docs/abi.md, with no dependencies.
//!
//! A plugin is a `wasm32-wasi` cdylib built with this crate as an rlib:
//!
//! ```text
//! rustc --edition 2021 --crate-type=rlib --crate-name workbench --target wasm32-wasi -C opt-level=s -C panic=abort pdk/rust/src/lib.rs -o libworkbench.rlib
//! rustc --edition 2021 --crate-type=cdylib --target wasm32-wasi -C opt-level=s -C panic=abort -C lto \
//!       -C link-arg=-zstack-size=262144 --extern workbench=libworkbench.rlib src/lib.rs -o name.wasm
//! ```
//!
//! The crate exports the allocator (`wb_alloc`). The plugin declares itself
//! in a function returning a [`Plugin`], exports `manifest` with
//! [`plugin!`], and writes one export per tool that calls [`run`]:
//!
//! ```ignore
//! use workbench::{schema, Error, Input, Plugin, Tool, Value};
//!
//! fn plugin() -> Plugin {
//!     Plugin::new("acme", "0.1.0", "Things at Acme.")
//!         .hosts(&["api.acme.example"])
//!         .tool(Tool::new("acme_get_thing", "Returns one thing.", get_thing)
//!             .input(schema::object(vec![("id", schema::string("The thing's id."))], &["id"]))
//!             .read_only().open_world())
//! }
//!
//! fn get_thing(input: &Input) -> Result<Value, Error> {
//!     let id = input.required_str("id")?;
//!     let url = format!("{}/things/{}", workbench::base_url().unwrap_or_default(), workbench::http::encode_component(id));
//!     workbench::http::Request::get(&url).header("Accept", "application/json").send()?.json()
//! }
//!
//! workbench::plugin!(plugin);
//!
//! #[no_mangle]
//! pub extern "C" fn acme_get_thing(ptr: u32, len: u32) -> u32 {
//!     workbench::run(plugin, "acme_get_thing", ptr, len)
//! }
//! ```
//!
//! [`export_tools!`] writes such tool exports for a list of slugs.
//!
//! # Input and errors
//!
//! Before a handler runs, its input is parsed, checked against the tool's
//! input schema (see [`schema`] for the keywords that are checked) and
//! completed with defaults; a violation is an INVALID_ARGUMENTS error naming
//! the field. A handler's [`Error`] keeps its code; an invalid code becomes
//! TOOL_ERROR, as the host would make it.
//!
//! wasm32 has no unwinding: a panic logs its message (at error level) and
//! traps, which the host reports as TRAP and answers by discarding the
//! instance. The JSON parser and the rest of this crate never panic on
//! hostile bytes.
//!
//! # Host services
//!
//! Handlers reach the outside world only through [`http::Request::send`]
//! (the host adds the user's credential), read settings with [`config`] and
//! [`base_url`], and report with [`log_info`] and its siblings and
//! [`progress`]. In a native build (`rustc --test`) these are served by the
//! [`testing`] module instead of the Workbench runtime.

pub mod error;
pub mod host;
pub mod http;
pub mod input;
pub mod json;
pub mod plugin;
pub mod schema;
pub mod sys;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;

#[cfg(test)]
mod tests;

pub use error::{code, Error};
pub use host::{base_url, config, log, log_debug, log_error, log_info, log_warn, progress, Level};
pub use input::Input;
pub use json::{Map, Number, Value};
pub use plugin::{export_manifest, run, ApiKeyField, Auth, Handler, Limits, Placement, Plugin, Tool};

/// plugin! writes the module's `manifest` export for a declaration function
/// `fn() -> Plugin`.
#[macro_export]
macro_rules! plugin {
    ($declare:path) => {
        /// manifest is the ABI's manifest export.
        #[no_mangle]
        pub extern "C" fn manifest() -> u32 {
            $crate::export_manifest($declare)
        }
    };
}

/// export_tools! writes one export per listed slug, each running the tool of
/// that slug: `workbench::export_tools!(plugin; acme_get_thing, acme_list_things);`
#[macro_export]
macro_rules! export_tools {
    ($declare:path; $($slug:ident),+ $(,)?) => {
        $(
            /// A tool export of the ABI.
            #[no_mangle]
            pub extern "C" fn $slug(ptr: u32, len: u32) -> u32 {
                $crate::run($declare, stringify!($slug), ptr, len)
            }
        )+
    };
}

/// obj! builds a JSON object: `obj! { "a" => 1, "b" => "x" }`. Values are
/// anything that converts into a [`Value`].
#[macro_export]
macro_rules! obj {
    () => { $crate::Value::object() };
    ($($key:expr => $value:expr),+ $(,)?) => {{
        let mut m = $crate::Map::new();
        $( m.insert($key, $crate::Value::from($value)); )+
        $crate::Value::Object(m)
    }};
}
