// The plugin's declaration (manifest, section 4 of docs/abi.md), its tools,
// and the exports the host calls: wb_alloc, manifest and one per tool.

import { JSONValue, JSONWriter, parseBytes } from "./json";
import { Schema, validate } from "./schema";
import { Code, Result, ToolError, fail, failWith } from "./result";
import { configGet, logError, outputSet } from "./host";
import { collectIfDue, noteIO } from "./gc";

/** ABI_VERSION is the ABI this kit implements. */
export const ABI_VERSION: i32 = 1;

/** MAX_INPUT_BYTES caps one wb_alloc request; the host never sends more than 4 MiB. */
export const MAX_INPUT_BYTES: i32 = 8 << 20;

/** OAuth2 is the oauth2 auth mode's configuration. */
export class OAuth2 {
  /** tokenAuth is "basic" or "post". */
  tokenAuth: string = "post";
  refreshUrl: string = "";
  constructor(
    public authorizeUrl: string,
    public tokenUrl: string,
    public scopes: Array<string>,
  ) {}
}

/** APIKeyField is one field a user fills in when connecting. */
export class APIKeyField {
  label: string = "";
  pattern: string = "";
  placeholder: string = "";
  constructor(
    public name: string,
    public secret: bool,
    public required: bool = true,
  ) {}
}

/**
 * APIKeyPlacement says where the host puts the key: in is "header",
 * "query" or "basic"; values may reference fields as {field}.
 */
export class APIKeyPlacement {
  name: string = "";
  value: string = "";
  username: string = "";
  password: string = "";
  constructor(public placeIn: string) {}

  static header(name: string, value: string): APIKeyPlacement {
    const p = new APIKeyPlacement("header");
    p.name = name;
    p.value = value;
    return p;
  }
  static query(name: string, value: string): APIKeyPlacement {
    const p = new APIKeyPlacement("query");
    p.name = name;
    p.value = value;
    return p;
  }
  static basic(username: string, password: string): APIKeyPlacement {
    const p = new APIKeyPlacement("basic");
    p.username = username;
    p.password = password;
    return p;
  }
}

/** Auth is the manifest's auth block; build it with its static constructors. */
export class Auth {
  oauth2: OAuth2 | null = null;
  apiKeyFields: Array<APIKeyField> | null = null;
  apiKeyPlacement: APIKeyPlacement | null = null;
  cookieDomains: Array<string> | null = null;
  cookieLoginUrl: string = "";

  constructor(public mode: string) {}

  static none(): Auth {
    return new Auth("none");
  }
  static oauth2(cfg: OAuth2): Auth {
    const a = new Auth("oauth2");
    a.oauth2 = cfg;
    return a;
  }
  static apiKey(fields: Array<APIKeyField>, placement: APIKeyPlacement): Auth {
    const a = new Auth("apikey");
    a.apiKeyFields = fields;
    a.apiKeyPlacement = placement;
    return a;
  }
  static cookie(domains: Array<string>, loginUrl: string): Auth {
    const a = new Auth("cookie");
    a.cookieDomains = domains;
    a.cookieLoginUrl = loginUrl;
    return a;
  }

  write(w: JSONWriter): void {
    w.beginObject();
    w.stringField("mode", this.mode);
    const o = this.oauth2;
    if (o != null) {
      w.key("oauth2").beginObject();
      w.stringField("authorizeUrl", o.authorizeUrl);
      w.stringField("tokenUrl", o.tokenUrl);
      w.field("scopes", JSONValue.stringArray(o.scopes));
      w.stringField("tokenAuth", o.tokenAuth);
      if (o.refreshUrl.length > 0) w.stringField("refreshUrl", o.refreshUrl);
      w.endObject();
    }
    const fields = this.apiKeyFields;
    const pl = this.apiKeyPlacement;
    if (fields != null && pl != null) {
      w.key("apikey").beginObject();
      w.key("fields").beginArray();
      for (let i = 0; i < fields.length; i++) {
        const f = fields[i];
        w.beginObject();
        w.stringField("name", f.name);
        if (f.label.length > 0) w.stringField("label", f.label);
        w.key("secret").bool(f.secret);
        w.key("required").bool(f.required);
        if (f.pattern.length > 0) w.stringField("pattern", f.pattern);
        if (f.placeholder.length > 0) w.stringField("placeholder", f.placeholder);
        w.endObject();
      }
      w.endArray();
      w.key("placement").beginObject();
      w.stringField("in", pl.placeIn);
      if (pl.name.length > 0) w.stringField("name", pl.name);
      if (pl.value.length > 0) w.stringField("value", pl.value);
      if (pl.username.length > 0) w.stringField("username", pl.username);
      if (pl.password.length > 0) w.stringField("password", pl.password);
      w.endObject();
      w.endObject();
    }
    const domains = this.cookieDomains;
    if (domains != null) {
      w.key("cookie").beginObject();
      w.field("domains", JSONValue.stringArray(domains));
      w.stringField("loginUrl", this.cookieLoginUrl);
      w.endObject();
    }
    w.endObject();
  }
}

/** Setting is an operator setting the plugin reads with configGet. */
export class Setting {
  enumValues: Array<string> | null = null;
  defaultValue: string = "";
  constructor(
    public name: string,
    public description: string,
  ) {}
}

/** Limits are resource requests (docs/abi.md section 7); 0 takes the host default. */
export class Limits {
  timeoutMs: i32 = 0;
  memoryPages: i32 = 0;
  outputBytes: i32 = 0;
  responseBytes: i32 = 0;
  concurrency: i32 = 0;

  get isZero(): bool {
    return (this.timeoutMs | this.memoryPages | this.outputBytes | this.responseBytes | this.concurrency) == 0;
  }

  write(w: JSONWriter): void {
    w.beginObject();
    if (this.timeoutMs > 0) w.key("timeoutMs").integer(this.timeoutMs);
    if (this.memoryPages > 0) w.key("memoryPages").integer(this.memoryPages);
    if (this.outputBytes > 0) w.key("outputBytes").integer(this.outputBytes);
    if (this.responseBytes > 0) w.key("responseBytes").integer(this.responseBytes);
    if (this.concurrency > 0) w.key("concurrency").integer(this.concurrency);
    w.endObject();
  }
}

/** Plugin describes the integration; field rules are those of the manifest. */
export class Plugin {
  title: string = "";
  logo: string = "";
  categories: Array<string> = [];
  /** baseUrl is where API calls start; read the effective value with baseURL(). */
  baseUrl: string = "";
  hosts: Array<string> = [];
  proxyBaseUrl: string = "";
  auth: Auth = Auth.none();
  settings: Array<Setting> = [];
  limits: Limits = new Limits();

  constructor(
    public name: string,
    public version: string,
    public description: string,
  ) {}
}

/** Handler runs a tool on its validated input. */
export type Handler = (input: Input) => Result;

/**
 * Input is a tool's validated input object, with the schema's defaults
 * filled in. Its getters return zero values for absent members; the schema
 * decides what is required.
 */
export class Input {
  constructor(
    /** value is the input object. */
    public value: JSONValue,
    /** raw is the input as the host sent it. */
    public raw: Uint8Array,
  ) {}

  has(key: string): bool {
    return this.value.has(key);
  }
  get(key: string): JSONValue | null {
    return this.value.get(key);
  }
  str(key: string, def: string = ""): string {
    return this.value.getString(key, def);
  }
  int(key: string, def: i64 = 0): i64 {
    return this.value.getInteger(key, def);
  }
  num(key: string, def: f64 = 0): f64 {
    const v = this.value.get(key);
    return v != null && v.isNumber ? v.asNumber : def;
  }
  bool(key: string, def: bool = false): bool {
    return this.value.getBool(key, def);
  }
  /** strings returns the string items of an array member (others skipped). */
  strings(key: string): Array<string> {
    const out = new Array<string>();
    const v = this.value.get(key);
    if (v == null || !v.isArray) return out;
    for (let i = 0; i < v.length; i++) {
      const item = v.at(i)!;
      if (item.isString) out.push(item.asString);
    }
    return out;
  }
}

/** Tool is one tool: its manifest entry and its handler. */
export class Tool {
  title: string = "";
  outputSchema: Schema | null = null;
  exportName: string;
  isReadOnly: bool = false;
  isDestructive: bool = false;
  isIdempotent: bool = false;
  isOpenWorld: bool = false;
  limits: Limits = new Limits();

  constructor(
    public slug: string,
    public description: string,
    public inputSchema: Schema,
    public handler: Handler,
  ) {
    this.exportName = slug;
  }

  titled(t: string): Tool {
    this.title = t;
    return this;
  }
  /** readOnly marks a tool that changes nothing (and is therefore idempotent). */
  readOnly(): Tool {
    this.isReadOnly = true;
    this.isIdempotent = true;
    return this;
  }
  destructive(): Tool {
    this.isDestructive = true;
    return this;
  }
  idempotent(): Tool {
    this.isIdempotent = true;
    return this;
  }
  /** openWorld marks a tool that talks to the outside world. */
  openWorld(): Tool {
    this.isOpenWorld = true;
    return this;
  }
  output(s: Schema): Tool {
    this.outputSchema = s;
    return this;
  }
  /** exportAs names the wasm export when it differs from the slug. */
  exportAs(name: string): Tool {
    this.exportName = name;
    return this;
  }
  timeoutMs(ms: i32): Tool {
    this.limits.timeoutMs = ms;
    return this;
  }

  /**
   * run is the body of the tool's wasm export: it takes the input the host
   * placed at ptr through wb_alloc, validates it, runs the handler, hands
   * the output to output_set and returns the status.
   */
  run(ptr: usize, len: usize): u32 {
    const r = this.invoke(ptr, len);
    outputSet(r.output.dataStart, r.output.length);
    const status = r.status;
    collectIfDue();
    return status;
  }

  /** invoke runs the tool and returns its result without touching the host's output. */
  invoke(ptr: usize, len: usize): Result {
    const raw = takeInput(ptr, len);
    if (raw == null) {
      return fail(Code.TOOL_ERROR, "the input at " + ptr.toString() + " (" + len.toString() + " bytes) was not allocated by wb_alloc");
    }
    if (this.inputSchema.error.length > 0) {
      return fail(Code.TOOL_ERROR, "tool " + this.slug + " has an invalid input schema: " + this.inputSchema.error);
    }
    let value: JSONValue;
    if (raw.length == 0) {
      value = JSONValue.object();
    } else {
      const parsed = parseBytes(raw);
      if (!parsed.ok) {
        return fail(Code.INVALID_ARGUMENTS, "the input is not valid JSON: " + parsed.error + " (at byte " + parsed.offset.toString() + ")");
      }
      value = parsed.value!;
    }
    const bad = validate(this.inputSchema.json, value);
    if (bad != null) {
      const details = bad.field.length > 0 ? JSONValue.object().setString("field", bad.field) : null;
      return fail(Code.INVALID_ARGUMENTS, bad.text, details);
    }
    const handler = this.handler;
    return handler(new Input(value, raw));
  }

  /** check returns what is wrong with the declaration, or "". */
  check(prefix: string): string {
    if (!validSlug(this.slug)) return "slug must match ^[a-z][a-z0-9_]{1,63}$";
    if (!this.slug.startsWith(prefix)) return "slug must start with " + prefix;
    if (this.description.trim().length == 0) return "description is required";
    if (this.isReadOnly && this.isDestructive) return "a tool cannot be both readOnly and destructive";
    if (this.exportName.startsWith("_") || this.exportName.startsWith("wb_")) return "export names starting with _ or wb_ are reserved";
    if (this.inputSchema.error.length > 0) return "inputSchema: " + this.inputSchema.error;
    if (this.inputSchema.json.getString("type") != "object") return 'inputSchema: type must be "object"';
    const out = this.outputSchema;
    if (out != null) {
      if (out.error.length > 0) return "outputSchema: " + out.error;
      if (out.json.getString("type") != "object") return 'outputSchema: type must be "object"';
    }
    return "";
  }

  write(w: JSONWriter): void {
    w.beginObject();
    w.stringField("slug", this.slug);
    if (this.title.length > 0) w.stringField("title", this.title);
    w.stringField("description", this.description);
    w.field("inputSchema", this.inputSchema.json);
    const out = this.outputSchema;
    if (out != null) w.field("outputSchema", out.json);
    w.key("annotations").beginObject();
    w.key("readOnly").bool(this.isReadOnly);
    w.key("destructive").bool(this.isDestructive);
    w.key("idempotent").bool(this.isIdempotent);
    w.key("openWorld").bool(this.isOpenWorld);
    w.endObject();
    w.stringField("export", this.exportName);
    if (!this.limits.isZero) {
      w.key("limits");
      this.limits.write(w);
    }
    w.endObject();
  }
}

/** tool declares a tool; chain readOnly(), destructive(), output(...) and so on. */
export function tool(slug: string, description: string, input: Schema, handler: Handler): Tool {
  return new Tool(slug, description, input, handler);
}

function validSlug(s: string): bool {
  if (s.length < 2 || s.length > 64) return false;
  const c0 = s.charCodeAt(0);
  if (c0 < 0x61 || c0 > 0x7a) return false;
  for (let i = 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c == 0x5f)) return false;
  }
  return true;
}

let registeredPlugin: Plugin | null = null;
let registeredTools: Array<Tool> = [];
let registerError: string = "";

/**
 * register declares the plugin and its tools. Call it once, from top-level
 * code; mistakes are reported by the manifest export with INVALID_MANIFEST,
 * so the host refuses the plugin with the reason.
 */
export function register(p: Plugin, tools: Array<Tool>): void {
  if (registeredPlugin != null) {
    registerError = "register called more than once (second call for " + p.name + ")";
    return;
  }
  registeredPlugin = p;
  registeredTools = tools;
}

/** registeredBaseUrl is the registered plugin's baseUrl, or "". */
export function registeredBaseUrl(): string {
  const p = registeredPlugin;
  return p == null ? "" : p.baseUrl;
}

/**
 * baseURL is the effective API base URL without a trailing slash: the host's
 * base_url setting, or else the plugin's baseUrl.
 */
export function baseURL(): string {
  let v = configGet("base_url");
  if (v == null || v.length == 0) v = registeredBaseUrl();
  let end = v.length;
  while (end > 0 && v.charCodeAt(end - 1) == 0x2f) end--;
  return v.substring(0, end);
}

/** manifestResult builds the manifest, or an INVALID_MANIFEST error. */
export function manifestResult(): Result {
  const p = registeredPlugin;
  if (registerError.length > 0) return fail(Code.INVALID_MANIFEST, registerError);
  if (p == null) return fail(Code.INVALID_MANIFEST, "no plugin registered: call register() from top-level code");
  if (registeredTools.length == 0) return fail(Code.INVALID_MANIFEST, "the plugin declares no tools");
  const prefix = p.name.replaceAll("-", "_") + "_";
  const seenSlug = new Set<string>();
  const seenExport = new Set<string>();
  for (let i = 0; i < registeredTools.length; i++) {
    const t = registeredTools[i];
    const why = t.check(prefix);
    if (why.length > 0) return fail(Code.INVALID_MANIFEST, "tool " + t.slug + ": " + why);
    if (seenSlug.has(t.slug)) return fail(Code.INVALID_MANIFEST, "tool " + t.slug + " is declared twice");
    if (seenExport.has(t.exportName)) return fail(Code.INVALID_MANIFEST, "export " + t.exportName + " is used by two tools");
    seenSlug.add(t.slug);
    seenExport.add(t.exportName);
  }
  const w = new JSONWriter(4096);
  w.beginObject();
  w.key("abi").integer(ABI_VERSION);
  w.stringField("name", p.name);
  w.stringField("version", p.version);
  if (p.title.length > 0) w.stringField("title", p.title);
  w.stringField("description", p.description);
  if (p.logo.length > 0) w.stringField("logo", p.logo);
  if (p.categories.length > 0) w.field("categories", JSONValue.stringArray(p.categories));
  if (p.baseUrl.length > 0) w.stringField("baseUrl", p.baseUrl);
  if (p.hosts.length > 0) w.field("hosts", JSONValue.stringArray(p.hosts));
  if (p.proxyBaseUrl.length > 0) {
    w.key("proxy").beginObject().stringField("baseUrl", p.proxyBaseUrl).endObject();
  }
  w.key("auth");
  p.auth.write(w);
  if (p.settings.length > 0) {
    w.key("settings").beginArray();
    for (let i = 0; i < p.settings.length; i++) {
      const s = p.settings[i];
      w.beginObject();
      w.stringField("name", s.name);
      if (s.description.length > 0) w.stringField("description", s.description);
      const e = s.enumValues;
      if (e != null) w.field("enum", JSONValue.stringArray(e));
      if (s.defaultValue.length > 0) w.stringField("default", s.defaultValue);
      w.endObject();
    }
    w.endArray();
  }
  if (!p.limits.isZero) {
    w.key("limits");
    p.limits.write(w);
  }
  w.key("tools").beginArray();
  for (let i = 0; i < registeredTools.length; i++) registeredTools[i].write(w);
  w.endArray();
  w.endObject();
  if (w.overflowed) return failWith(new ToolError(Code.INVALID_MANIFEST, "the manifest is larger than the output buffer cap"));
  return new Result(0, w.buf);
}

/** manifest is the manifest export. */
export function manifest(): u32 {
  const r = manifestResult();
  outputSet(r.output.dataStart, r.output.length);
  const status = r.status;
  collectIfDue();
  return status;
}

// The input buffer handed out by wb_alloc, pinned until a tool takes it.
let pendingInput: usize = 0;
let pendingSize: i32 = 0;

function releaseInput(): void {
  if (pendingInput != 0) __unpin(pendingInput);
  pendingInput = 0;
  pendingSize = 0;
}

/**
 * wb_alloc is the allocator export: it returns size writable bytes for the
 * next call's input, pinned so that no collection frees them before the
 * tool takes them, or 0 when size is impossible. A buffer left behind by a
 * call that never ran is released.
 */
export function wb_alloc(size: i32): usize {
  releaseInput();
  if (size < 0 || size > MAX_INPUT_BYTES) return 0;
  noteIO(size);
  const buf = new ArrayBuffer(size);
  pendingInput = __pin(changetype<usize>(buf));
  pendingSize = size;
  return pendingInput;
}

/** takeInput returns the input at ptr and unpins it; null when ptr was not handed out. */
function takeInput(ptr: usize, len: usize): Uint8Array | null {
  if (ptr == 0 && len == 0) {
    releaseInput();
    return new Uint8Array(0);
  }
  if (ptr == 0 || ptr != pendingInput || len > <usize>pendingSize) {
    releaseInput();
    return null;
  }
  const buf = changetype<ArrayBuffer>(ptr);
  releaseInput();
  return Uint8Array.wrap(buf, 0, <i32>len);
}

/**
 * abort replaces the env.abort import (asc --use abort=...): it logs the
 * message through workbench_v1.log and traps, which the host reports as TRAP.
 */
export function wbAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  let msg = "abort: " + (message != null ? message : "(no message)");
  if (fileName != null) msg += " at " + fileName + ":" + line.toString() + ":" + column.toString();
  logError(msg);
  unreachable();
}
