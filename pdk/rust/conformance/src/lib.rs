//! conf-rust is the Rust PDK's ABI conformance plugin: the same six tools
//! every PDK's conformance plugin has, so one test can check that each
//! host import and error path behaves identically across languages.
//!
//! Its tool exports are written out by hand, the way the ABI describes
//! them; a plugin may use `workbench::export_tools!` instead.

use workbench::http::Request;
use workbench::{obj, schema, Error, Input, Plugin, Tool, Value};

fn plugin() -> Plugin {
    Plugin::new("conf-rust", "0.1.0", "ABI conformance tools of the Rust PDK.")
        .title("Conformance (Rust)")
        .tool(
            Tool::new("conf_rust_echo", "Returns its input object unchanged.", echo)
                .input(schema::open_object("Any object."))
                .read_only()
                .idempotent(),
        )
        .tool(Tool::new("conf_rust_fail", "Always fails with NOT_FOUND.", fail).read_only())
        .tool(
            Tool::new("conf_rust_config", "Returns the value of one setting from config_get, or null.", config)
                .input(schema::object(vec![("key", schema::string("The setting's name."))], &["key"]))
                .read_only(),
        )
        .tool(
            Tool::new("conf_rust_http", "GETs a URL and returns its status and body text.", http)
                .input(schema::object(vec![("url", schema::string("An absolute URL."))], &["url"]))
                .read_only()
                .open_world(),
        )
        .tool(Tool::new("conf_rust_log", "Logs \"hello from rust\" at info level.", log).read_only())
        .tool(Tool::new("conf_rust_progress", "Reports progress 1/2 then 2/2.", progress).read_only())
}

fn echo(input: &Input) -> Result<Value, Error> {
    Ok(input.value().clone())
}

fn fail(_: &Input) -> Result<Value, Error> {
    Err(Error::not_found("nothing here").with_details(obj! { "id" => 7 }))
}

fn config(input: &Input) -> Result<Value, Error> {
    Ok(obj! { "value" => workbench::config(input.required_str("key")?) })
}

fn http(input: &Input) -> Result<Value, Error> {
    let resp = Request::get(input.required_str("url")?).send()?;
    Ok(obj! { "status" => resp.status, "body" => resp.text() })
}

fn log(_: &Input) -> Result<Value, Error> {
    workbench::log_info("hello from rust");
    Ok(Value::object())
}

fn progress(_: &Input) -> Result<Value, Error> {
    workbench::progress(1.0, 2.0, "half");
    workbench::progress(2.0, 2.0, "done");
    Ok(Value::object())
}

workbench::plugin!(plugin);

#[no_mangle]
pub extern "C" fn conf_rust_echo(ptr: u32, len: u32) -> u32 {
    workbench::run(plugin, "conf_rust_echo", ptr, len)
}

#[no_mangle]
pub extern "C" fn conf_rust_fail(ptr: u32, len: u32) -> u32 {
    workbench::run(plugin, "conf_rust_fail", ptr, len)
}

#[no_mangle]
pub extern "C" fn conf_rust_config(ptr: u32, len: u32) -> u32 {
    workbench::run(plugin, "conf_rust_config", ptr, len)
}

#[no_mangle]
pub extern "C" fn conf_rust_http(ptr: u32, len: u32) -> u32 {
    workbench::run(plugin, "conf_rust_http", ptr, len)
}

#[no_mangle]
pub extern "C" fn conf_rust_log(ptr: u32, len: u32) -> u32 {
    workbench::run(plugin, "conf_rust_log", ptr, len)
}

#[no_mangle]
pub extern "C" fn conf_rust_progress(ptr: u32, len: u32) -> u32 {
    workbench::run(plugin, "conf_rust_progress", ptr, len)
}
