// Outbound HTTP through the host's http_request import, plus URL-encoded
// forms and query strings.

import { ByteBuffer, decodeUTF8 } from "./bytes";
import { JSONValue, JSONWriter, ParseResult, parseBytes } from "./json";
import { Code, ToolError } from "./result";
import { httpRequest } from "./host";

/** Headers is a list of header fields; lookups ignore case. */
export class Headers {
  names: Array<string> = [];
  values: Array<string> = [];

  /** get returns the first value of name, or "". */
  get(name: string): string {
    const lower = name.toLowerCase();
    for (let i = 0; i < this.names.length; i++) {
      if (this.names[i].toLowerCase() == lower) return this.values[i];
    }
    return "";
  }

  has(name: string): bool {
    const lower = name.toLowerCase();
    for (let i = 0; i < this.names.length; i++) {
      if (this.names[i].toLowerCase() == lower) return true;
    }
    return false;
  }

  /** add appends a value. */
  add(name: string, value: string): Headers {
    this.names.push(name);
    this.values.push(value);
    return this;
  }

  /** set replaces every value of name with value. */
  set(name: string, value: string): Headers {
    this.del(name);
    return this.add(name, value);
  }

  del(name: string): Headers {
    const lower = name.toLowerCase();
    const names = new Array<string>();
    const values = new Array<string>();
    for (let i = 0; i < this.names.length; i++) {
      if (this.names[i].toLowerCase() != lower) {
        names.push(this.names[i]);
        values.push(this.values[i]);
      }
    }
    this.names = names;
    this.values = values;
    return this;
  }

  /** write appends {"Name": ["v1", "v2"], ...}, grouping repeated names. */
  write(w: JSONWriter): void {
    w.beginObject();
    const done = new Set<string>();
    for (let i = 0; i < this.names.length; i++) {
      const lower = this.names[i].toLowerCase();
      if (done.has(lower)) continue;
      done.add(lower);
      w.key(this.names[i]).beginArray();
      for (let j = i; j < this.names.length; j++) {
        if (this.names[j].toLowerCase() == lower) w.string(this.values[j]);
      }
      w.endArray();
    }
    w.endObject();
  }
}

/** Request is one outbound request. */
export class Request {
  headers: Headers = new Headers();
  body: Uint8Array | null = null;
  /** timeoutMs bounds the request when positive; the host cuts it to the call's deadline. */
  timeoutMs: i32 = 0;

  constructor(
    public method: string,
    public url: string,
  ) {}

  static get(url: string): Request {
    return new Request("GET", url);
  }

  static post(url: string): Request {
    return new Request("POST", url);
  }

  header(name: string, value: string): Request {
    this.headers.set(name, value);
    return this;
  }

  /** bytes sets the body and its content type. */
  bytes(contentType: string, body: Uint8Array): Request {
    this.body = body;
    return this.header("Content-Type", contentType);
  }

  /** json sets the body to v with content type application/json; charset=utf-8. */
  json(v: JSONValue): Request {
    const w = new JSONWriter();
    v.write(w);
    return this.bytes("application/json; charset=utf-8", w.toBytes());
  }

  /** form sets an application/x-www-form-urlencoded body. */
  form(f: Form): Request {
    return this.bytes("application/x-www-form-urlencoded", f.encode().toBytes());
  }

  /** head is the request JSON of http_request. */
  head(): ByteBuffer {
    const w = new JSONWriter(128 + this.url.length);
    w.beginObject();
    w.stringField("method", this.method);
    w.stringField("url", this.url);
    if (this.headers.names.length > 0) {
      w.key("headers");
      this.headers.write(w);
    }
    if (this.timeoutMs > 0) w.key("timeoutMs").integer(this.timeoutMs);
    w.endObject();
    return w.buf;
  }
}

/** Response is the upstream's answer; 4xx and 5xx are responses, not errors. */
export class Response {
  headers: Headers = new Headers();
  url: string = "";
  constructor(
    public status: i32,
    public body: Uint8Array,
  ) {}

  /** ok reports a 2xx status. */
  get ok(): bool {
    return this.status >= 200 && this.status <= 299;
  }

  text(): string {
    return decodeUTF8(this.body.dataStart, this.body.length);
  }

  json(): ParseResult {
    return parseBytes(this.body);
  }
}

/** HTTPResult is a response, or the host's error (EGRESS_DENIED, NOT_CONNECTED, ...). */
export class HTTPResult {
  response: Response | null = null;
  error: ToolError | null = null;
}

/** send performs req through the host. The host adds the user's credential. */
export function send(req: Request): HTTPResult {
  const out = new HTTPResult();
  const raw = httpRequest(req.head(), req.body);
  const failure = raw.failure;
  if (failure != null) {
    const parsed = parseBytes(failure);
    const e = parsed.ok ? ToolError.fromJSON(parsed.value) : null;
    out.error = e != null ? e : new ToolError(Code.TOOL_ERROR, "the host reported an unreadable HTTP failure");
    return out;
  }
  const head = parseBytes(raw.head!);
  if (!head.ok || !head.value!.isObject) {
    out.error = new ToolError(Code.TOOL_ERROR, "the host returned an unreadable response head");
    return out;
  }
  const h = head.value!;
  const resp = new Response(<i32>h.getInteger("status"), raw.body!);
  resp.url = h.getString("url");
  const hs = h.get("headers");
  if (hs != null && hs.isObject) {
    for (let i = 0; i < hs.length; i++) {
      const name = hs.keyAt(i);
      const vals = hs.at(i)!;
      if (vals.isString) resp.headers.add(name, vals.asString);
      for (let j = 0; j < vals.length; j++) resp.headers.add(name, vals.at(j)!.asString);
    }
  }
  out.response = resp;
  return out;
}

/**
 * Form is an ordered list of name=value pairs, encoded as
 * application/x-www-form-urlencoded (also the form of a URL query).
 */
export class Form {
  names: Array<string> = [];
  values: Array<string> = [];

  add(name: string, value: string): Form {
    this.names.push(name);
    this.values.push(value);
    return this;
  }

  /** addIf adds the pair when value is not empty. */
  addIf(name: string, value: string): Form {
    if (value.length > 0) this.add(name, value);
    return this;
  }

  get length(): i32 {
    return this.names.length;
  }

  encode(): ByteBuffer {
    const b = new ByteBuffer(64);
    for (let i = 0; i < this.names.length; i++) {
      if (i > 0) b.byte(0x26);
      escapeComponent(b, this.names[i]);
      b.byte(0x3d);
      escapeComponent(b, this.values[i]);
    }
    return b;
  }

  toString(): string {
    return this.encode().toString();
  }
}

/** withQuery returns url with the form appended as its query string. */
export function withQuery(url: string, q: Form): string {
  if (q.length == 0) return url;
  return url + (url.includes("?") ? "&" : "?") + q.toString();
}

const HEX_UPPER = "0123456789ABCDEF";

/**
 * escapeComponent percent-encodes s (as UTF-8) for a form or query: letters,
 * digits and -_.~ stay, space becomes +, everything else is %XX.
 */
export function escapeComponent(b: ByteBuffer, s: string): void {
  const utf8 = new ByteBuffer(s.length + 8);
  utf8.utf8(s);
  const p = utf8.dataStart;
  for (let i = 0; i < utf8.length; i++) {
    const c = <u32>load<u8>(p + <usize>i);
    if ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c == 0x2d || c == 0x5f || c == 0x2e || c == 0x7e) {
      b.byte(<u8>c);
    } else if (c == 0x20) {
      b.byte(0x2b);
    } else {
      b.byte(0x25);
      b.byte(<u8>HEX_UPPER.charCodeAt(c >> 4));
      b.byte(<u8>HEX_UPPER.charCodeAt(c & 15));
    }
  }
}

/** encodeComponent returns s percent-encoded as escapeComponent does. */
export function encodeComponent(s: string): string {
  const b = new ByteBuffer(s.length + 8);
  escapeComponent(b, s);
  return b.toString();
}
