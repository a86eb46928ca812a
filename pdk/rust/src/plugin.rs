//! Declaring a plugin and its tools, producing the manifest (docs/abi.md
//! section 4) and running tool calls.

use crate::error::{code, Error};
use crate::input::Input;
use crate::json::{self, Map, Value};
use crate::{schema, sys};
use std::cell::RefCell;
use std::rc::Rc;

/// ABI_VERSION is the ABI this crate implements.
pub const ABI_VERSION: u32 = 1;

/// Handler runs a tool: it gets the checked input and returns the result
/// (any JSON value; an object is recommended) or a structured error.
pub type Handler = fn(&Input) -> Result<Value, Error>;

/// Plugin describes the integration a module provides. Field meanings and
/// rules are those of the manifest in docs/abi.md; the host validates them
/// when it loads the plugin. Build it with [`Plugin::new`] and the methods
/// that follow it.
#[derive(Clone, Debug)]
pub struct Plugin {
    pub name: String,
    pub version: String,
    pub title: String,
    pub description: String,
    pub logo: String,
    pub categories: Vec<String>,
    pub base_url: String,
    pub hosts: Vec<String>,
    pub proxy_base_url: String,
    pub auth: Auth,
    pub settings: Vec<Setting>,
    pub limits: Limits,
    pub tools: Vec<Tool>,
}

/// Auth says how the host authenticates outbound requests.
#[derive(Clone, Debug, PartialEq)]
pub enum Auth {
    /// None: the host adds no credential.
    None,
    /// OAuth2: the host sends the user's bearer token.
    OAuth2 { authorize_url: String, token_url: String, scopes: Vec<String>, token_auth: String, refresh_url: String },
    /// ApiKey: the user fills in fields; placement says where they go.
    ApiKey { fields: Vec<ApiKeyField>, placement: Placement },
    /// Cookie: the host sends the stored cookies of these domains.
    Cookie { domains: Vec<String>, login_url: String },
}

/// ApiKeyField is one field of an API-key connection form.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiKeyField {
    pub name: String,
    pub label: String,
    pub secret: bool,
    pub required: bool,
    pub pattern: String,
    pub placeholder: String,
}

impl ApiKeyField {
    /// new returns an optional, non-secret field.
    pub fn new(name: &str, label: &str) -> ApiKeyField {
        ApiKeyField { name: name.to_string(), label: label.to_string(), secret: false, required: false, pattern: String::new(), placeholder: String::new() }
    }

    /// secret marks a field the guest can never read.
    pub fn secret(mut self) -> ApiKeyField {
        self.secret = true;
        self
    }

    /// required marks a field the user must fill in.
    pub fn required(mut self) -> ApiKeyField {
        self.required = true;
        self
    }

    /// pattern sets the regular expression a value must match.
    pub fn pattern(mut self, re: &str) -> ApiKeyField {
        self.pattern = re.to_string();
        self
    }

    /// placeholder sets the form's placeholder text.
    pub fn placeholder(mut self, text: &str) -> ApiKeyField {
        self.placeholder = text.to_string();
        self
    }
}

/// Placement says where the host puts an API key; values may reference
/// fields as {field}.
#[derive(Clone, Debug, PartialEq)]
pub enum Placement {
    Header { name: String, value: String },
    Query { name: String, value: String },
    Basic { username: String, password: String },
}

/// Setting is an operator setting the plugin reads with [`crate::config`].
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    pub name: String,
    pub description: String,
    pub enum_values: Vec<String>,
    pub default: String,
}

/// Limits are resource requests (docs/abi.md section 7); 0 takes the
/// host's default. memory_pages applies to the whole plugin only.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    pub timeout_ms: u64,
    pub memory_pages: u64,
    pub output_bytes: u64,
    pub response_bytes: u64,
    pub concurrency: u64,
}

/// Annotations are the tool's hints; all four are always written.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

/// Tool is a declared tool: its manifest entry and its handler.
#[derive(Clone)]
pub struct Tool {
    pub slug: String,
    pub title: String,
    pub description: String,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub annotations: Annotations,
    /// export is the wasm export's name; empty means the slug.
    pub export: String,
    pub limits: Limits,
    pub handler: Handler,
}

impl std::fmt::Debug for Tool {
    /// A tool debug-prints as its manifest entry (the handler has no
    /// printable form).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tool({})", self.to_value())
    }
}

impl Plugin {
    /// new starts a plugin declaration with auth mode none.
    pub fn new(name: &str, version: &str, description: &str) -> Plugin {
        Plugin {
            name: name.to_string(),
            version: version.to_string(),
            title: String::new(),
            description: description.to_string(),
            logo: String::new(),
            categories: Vec::new(),
            base_url: String::new(),
            hosts: Vec::new(),
            proxy_base_url: String::new(),
            auth: Auth::None,
            settings: Vec::new(),
            limits: Limits::default(),
            tools: Vec::new(),
        }
    }

    /// title sets the human-readable title.
    pub fn title(mut self, title: &str) -> Plugin {
        self.title = title.to_string();
        self
    }

    /// logo sets an https:// or data:image/ logo.
    pub fn logo(mut self, logo: &str) -> Plugin {
        self.logo = logo.to_string();
        self
    }

    /// categories sets the lowercase category words.
    pub fn categories(mut self, categories: &[&str]) -> Plugin {
        self.categories = categories.iter().map(|s| s.to_string()).collect();
        self
    }

    /// base_url sets the https:// URL API calls start from.
    pub fn base_url(mut self, url: &str) -> Plugin {
        self.base_url = url.to_string();
        self
    }

    /// hosts sets the host names the plugin may reach.
    pub fn hosts(mut self, hosts: &[&str]) -> Plugin {
        self.hosts = hosts.iter().map(|s| s.to_string()).collect();
        self
    }

    /// proxy_base_url sets where the host's authenticated proxy forwards.
    pub fn proxy_base_url(mut self, url: &str) -> Plugin {
        self.proxy_base_url = url.to_string();
        self
    }

    /// auth sets the auth mode.
    pub fn auth(mut self, auth: Auth) -> Plugin {
        self.auth = auth;
        self
    }

    /// setting declares an operator setting.
    pub fn setting(mut self, name: &str, description: &str, enum_values: &[&str], default: &str) -> Plugin {
        self.settings.push(Setting {
            name: name.to_string(),
            description: description.to_string(),
            enum_values: enum_values.iter().map(|s| s.to_string()).collect(),
            default: default.to_string(),
        });
        self
    }

    /// limits sets the plugin-wide resource requests.
    pub fn limits(mut self, limits: Limits) -> Plugin {
        self.limits = limits;
        self
    }

    /// tool adds a tool.
    pub fn tool(mut self, tool: Tool) -> Plugin {
        self.tools.push(tool);
        self
    }

    /// find returns the tool with the given slug.
    pub fn find(&self, slug: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.slug == slug)
    }

    /// manifest_json returns the manifest the manifest export produces, or
    /// the INVALID_MANIFEST error it reports when the declarations are
    /// inconsistent. The host checks the rest.
    pub fn manifest_json(&self) -> Result<String, Error> {
        let bad = |msg: String| Error::new(code::INVALID_MANIFEST, msg);
        let prefix = format!("{}_", self.name.replace('-', "_"));
        let mut m = Map::new();
        m.insert("abi", ABI_VERSION);
        m.insert("name", self.name.as_str());
        m.insert("version", self.version.as_str());
        put_str(&mut m, "title", &self.title);
        m.insert("description", self.description.as_str());
        put_str(&mut m, "logo", &self.logo);
        put_list(&mut m, "categories", &self.categories);
        put_str(&mut m, "baseUrl", &self.base_url);
        put_list(&mut m, "hosts", &self.hosts);
        if !self.proxy_base_url.is_empty() {
            m.insert("proxy", Value::object().with("baseUrl", self.proxy_base_url.as_str()));
        }
        m.insert("auth", self.auth.to_value());
        if !self.settings.is_empty() {
            m.insert("settings", self.settings.iter().map(Setting::to_value).collect::<Value>());
        }
        if let Some(l) = self.limits.to_value(true) {
            m.insert("limits", l);
        }
        let mut tools = Vec::with_capacity(self.tools.len());
        let mut seen_exports: Vec<(&str, &str)> = Vec::new();
        for (i, t) in self.tools.iter().enumerate() {
            let export = t.export_name();
            if t.description.trim().is_empty() {
                return Err(bad(format!("tools[{}] ({}): description is required", i, t.slug)));
            }
            if t.annotations.read_only && t.annotations.destructive {
                return Err(bad(format!("tools[{}] ({}): a tool cannot be both read-only and destructive", i, t.slug)));
            }
            if t.input_schema.get_str("type") != Some("object") {
                return Err(bad(format!("tools[{}] ({}): inputSchema: type must be \"object\"", i, t.slug)));
            }
            if let Some(o) = &t.output_schema {
                if o.get_str("type") != Some("object") {
                    return Err(bad(format!("tools[{}] ({}): outputSchema: type must be \"object\"", i, t.slug)));
                }
            }
            if t.limits.memory_pages != 0 {
                return Err(bad(format!("tools[{}] ({}): memory_pages can be set only for the whole plugin", i, t.slug)));
            }
            if !valid_slug(&t.slug) {
                return Err(bad(format!("tools[{}].slug {} must match ^[a-z][a-z0-9_]{{1,63}}$", i, json::quote(&t.slug))));
            }
            if !t.slug.starts_with(&prefix) {
                return Err(bad(format!("tools[{}].slug {} must start with {}", i, json::quote(&t.slug), json::quote(&prefix))));
            }
            if self.tools[..i].iter().any(|o| o.slug == t.slug) {
                return Err(bad(format!("tools[{}].slug {} is declared twice", i, json::quote(&t.slug))));
            }
            if let Some((_, other)) = seen_exports.iter().find(|(e, _)| *e == export) {
                return Err(bad(format!("tools[{}].export {} is also the export of {}", i, json::quote(export), other)));
            }
            if export.starts_with("wb_") || export.starts_with('_') || export == "manifest" || export == "memory" {
                return Err(bad(format!("tools[{}].export {} is reserved", i, json::quote(export))));
            }
            seen_exports.push((export, &t.slug));
            tools.push(t.to_value());
        }
        m.insert("tools", Value::Array(tools));
        Ok(Value::Object(m).to_json())
    }
}

fn put_str(m: &mut Map, key: &str, v: &str) {
    if !v.is_empty() {
        m.insert(key, v);
    }
}

fn put_list(m: &mut Map, key: &str, v: &[String]) {
    if !v.is_empty() {
        m.insert(key, v.iter().map(|s| Value::from(s.as_str())).collect::<Value>());
    }
}

fn valid_slug(s: &str) -> bool {
    let b = s.as_bytes();
    (2..=64).contains(&b.len())
        && b.first().map_or(false, |c| c.is_ascii_lowercase())
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

impl Auth {
    fn to_value(&self) -> Value {
        match self {
            Auth::None => Value::object().with("mode", "none"),
            Auth::OAuth2 { authorize_url, token_url, scopes, token_auth, refresh_url } => {
                let mut o = Map::new();
                o.insert("authorizeUrl", authorize_url.as_str());
                o.insert("tokenUrl", token_url.as_str());
                o.insert("scopes", scopes.iter().map(|s| Value::from(s.as_str())).collect::<Value>());
                put_str(&mut o, "tokenAuth", token_auth);
                put_str(&mut o, "refreshUrl", refresh_url);
                Value::object().with("mode", "oauth2").with("oauth2", o)
            }
            Auth::ApiKey { fields, placement } => {
                let fields: Value = fields
                    .iter()
                    .map(|f| {
                        let mut o = Map::new();
                        o.insert("name", f.name.as_str());
                        o.insert("label", f.label.as_str());
                        o.insert("secret", f.secret);
                        o.insert("required", f.required);
                        put_str(&mut o, "pattern", &f.pattern);
                        put_str(&mut o, "placeholder", &f.placeholder);
                        Value::Object(o)
                    })
                    .collect();
                let placement = match placement {
                    Placement::Header { name, value } => Value::object().with("in", "header").with("name", name.as_str()).with("value", value.as_str()),
                    Placement::Query { name, value } => Value::object().with("in", "query").with("name", name.as_str()).with("value", value.as_str()),
                    Placement::Basic { username, password } => Value::object().with("in", "basic").with("username", username.as_str()).with("password", password.as_str()),
                };
                Value::object().with("mode", "apikey").with("apikey", Value::object().with("fields", fields).with("placement", placement))
            }
            Auth::Cookie { domains, login_url } => {
                let domains: Value = domains.iter().map(|s| Value::from(s.as_str())).collect();
                Value::object().with("mode", "cookie").with("cookie", Value::object().with("domains", domains).with("loginUrl", login_url.as_str()))
            }
        }
    }
}

impl Setting {
    fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("name", self.name.as_str());
        put_str(&mut o, "description", &self.description);
        put_list(&mut o, "enum", &self.enum_values);
        put_str(&mut o, "default", &self.default);
        Value::Object(o)
    }
}

impl Limits {
    /// to_value returns the limits object, or None when nothing is requested.
    fn to_value(self, plugin_level: bool) -> Option<Value> {
        let mut o = Map::new();
        let mut put = |k: &str, v: u64| {
            if v > 0 {
                o.insert(k, v);
            }
        };
        put("timeoutMs", self.timeout_ms);
        if plugin_level {
            put("memoryPages", self.memory_pages);
        }
        put("outputBytes", self.output_bytes);
        put("responseBytes", self.response_bytes);
        put("concurrency", self.concurrency);
        if o.is_empty() {
            None
        } else {
            Some(Value::Object(o))
        }
    }
}

impl Tool {
    /// new declares a tool whose input is an object without properties;
    /// set the real input schema with [`Tool::input`].
    pub fn new(slug: &str, description: &str, handler: Handler) -> Tool {
        Tool {
            slug: slug.to_string(),
            title: String::new(),
            description: description.to_string(),
            input_schema: schema::object(Vec::new(), &[]),
            output_schema: None,
            annotations: Annotations::default(),
            export: String::new(),
            limits: Limits::default(),
            handler,
        }
    }

    /// title sets the tool's title (at most 120 characters).
    pub fn title(mut self, title: &str) -> Tool {
        self.title = title.to_string();
        self
    }

    /// input sets the input JSON Schema; its type must be "object".
    pub fn input(mut self, schema: Value) -> Tool {
        self.input_schema = schema;
        self
    }

    /// output sets the output JSON Schema; its type must be "object".
    pub fn output(mut self, schema: Value) -> Tool {
        self.output_schema = Some(schema);
        self
    }

    /// read_only marks a tool that changes nothing.
    pub fn read_only(mut self) -> Tool {
        self.annotations.read_only = true;
        self
    }

    /// destructive marks a tool that may delete or overwrite data.
    pub fn destructive(mut self) -> Tool {
        self.annotations.destructive = true;
        self
    }

    /// idempotent marks a tool whose repeated calls have no further effect.
    pub fn idempotent(mut self) -> Tool {
        self.annotations.idempotent = true;
        self
    }

    /// open_world marks a tool that talks to an outside system.
    pub fn open_world(mut self) -> Tool {
        self.annotations.open_world = true;
        self
    }

    /// export names the wasm export when it differs from the slug.
    pub fn export(mut self, name: &str) -> Tool {
        self.export = name.to_string();
        self
    }

    /// limits sets per-tool overrides (memory_pages must stay 0).
    pub fn limits(mut self, limits: Limits) -> Tool {
        self.limits = limits;
        self
    }

    /// export_name is the export that runs the tool.
    pub fn export_name(&self) -> &str {
        if self.export.is_empty() {
            &self.slug
        } else {
            &self.export
        }
    }

    fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("slug", self.slug.as_str());
        put_str(&mut o, "title", &self.title);
        o.insert("description", self.description.as_str());
        o.insert("inputSchema", self.input_schema.clone());
        if let Some(s) = &self.output_schema {
            o.insert("outputSchema", s.clone());
        }
        let a = self.annotations;
        o.insert(
            "annotations",
            Value::object().with("readOnly", a.read_only).with("destructive", a.destructive).with("idempotent", a.idempotent).with("openWorld", a.open_world),
        );
        o.insert("export", self.export_name());
        if let Some(l) = self.limits.to_value(false) {
            o.insert("limits", l);
        }
        Value::Object(o)
    }
}

/// Statuses of docs/abi.md section 3.
pub const STATUS_OK: u32 = 0;
pub const STATUS_ERROR: u32 = 1;

thread_local! {
    /// DECLARED caches each declaration function's plugin, built on first
    /// use: once per instance.
    static DECLARED: RefCell<Vec<(usize, Rc<Plugin>)>> = RefCell::new(Vec::new());
}

/// declared returns the plugin declare builds, building it once.
pub fn declared(declare: fn() -> Plugin) -> Rc<Plugin> {
    let key = declare as usize;
    let cached = DECLARED.with(|d| d.try_borrow().ok().and_then(|d| d.iter().find(|(k, _)| *k == key).map(|(_, p)| Rc::clone(p))));
    if let Some(p) = cached {
        return p;
    }
    let p = Rc::new(declare());
    DECLARED.with(|d| {
        if let Ok(mut d) = d.try_borrow_mut() {
            d.push((key, Rc::clone(&p)));
        }
    });
    p
}

/// export_manifest is the body of the manifest export; [`crate::plugin!`]
/// writes the export.
pub fn export_manifest(declare: fn() -> Plugin) -> u32 {
    install_panic_log();
    let (out, status) = manifest_output(declare);
    sys::output_set_bytes(out.as_bytes());
    status
}

/// manifest_output returns the manifest export's output and status.
pub fn manifest_output(declare: fn() -> Plugin) -> (String, u32) {
    match declared(declare).manifest_json() {
        Ok(m) => (m, STATUS_OK),
        Err(e) => (e.to_value().to_json(), STATUS_ERROR),
    }
}

/// run is the body of a tool's export: it takes the input the host placed
/// at ptr through wb_alloc, runs the tool with the given slug, hands the
/// result or the error to the host with output_set and returns the status.
///
/// ```ignore
/// #[no_mangle]
/// pub extern "C" fn acme_get_thing(ptr: u32, len: u32) -> u32 {
///     workbench::run(plugin, "acme_get_thing", ptr, len)
/// }
/// ```
#[cfg(target_arch = "wasm32")]
pub fn run(declare: fn() -> Plugin, slug: &str, ptr: u32, len: u32) -> u32 {
    install_panic_log();
    let (out, status) = match sys::take_input(ptr, len) {
        Some(input) => invoke(declare, slug, &input),
        None => (
            Error::new(code::TOOL_ERROR, format!("the input at {} ({} bytes) was not allocated by wb_alloc", ptr, len)).to_value().to_json(),
            STATUS_ERROR,
        ),
    };
    sys::output_set_bytes(out.as_bytes());
    status
}

/// run is the native stand-in of the wasm export body, so that a plugin
/// crate compiles for `rustc --test`. Native code has no guest memory to
/// read the input from, so it reports an error; tests call
/// [`crate::testing::call`] instead.
#[cfg(not(target_arch = "wasm32"))]
pub fn run(_declare: fn() -> Plugin, slug: &str, _ptr: u32, _len: u32) -> u32 {
    let e = Error::new(code::TOOL_ERROR, format!("{} was called through its export in a native build; use workbench::testing::call", slug));
    sys::output_set_bytes(e.to_value().to_json().as_bytes());
    STATUS_ERROR
}

/// invoke runs the tool with the given slug on raw input bytes and returns
/// the output and the status.
pub fn invoke(declare: fn() -> Plugin, slug: &str, input: &[u8]) -> (String, u32) {
    let plugin = declared(declare);
    match call_tool(&plugin, slug, input) {
        Ok(v) => (v.to_json(), STATUS_OK),
        Err(e) => (e.to_value().to_json(), STATUS_ERROR),
    }
}

fn call_tool(plugin: &Plugin, slug: &str, input: &[u8]) -> Result<Value, Error> {
    let tool = plugin.find(slug).ok_or_else(|| Error::new(code::TOOL_ERROR, format!("this module declares no tool {}", json::quote(slug))))?;
    let mut value = if input.iter().all(|b| b.is_ascii_whitespace()) {
        Value::object()
    } else {
        json::parse(input).map_err(|e| Error::invalid_arguments(format!("the input is not valid JSON: {}", e)))?
    };
    schema::check(&tool.input_schema, &value)?;
    schema::apply_defaults(&tool.input_schema, &mut value);
    (tool.handler)(&Input::new(slug, value))
}

/// install_panic_log makes a panic write its message to the plugin's log
/// before the module traps (wasm32 has no unwinding, so the host reports
/// the call as TRAP).
#[cfg(target_arch = "wasm32")]
fn install_panic_log() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            crate::host::log_error(&format!("panic: {}", info));
        }));
    });
}

#[cfg(not(target_arch = "wasm32"))]
fn install_panic_log() {}
