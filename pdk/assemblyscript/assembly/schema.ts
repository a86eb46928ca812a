// JSON Schema for tool inputs and outputs: a builder for the common cases,
// raw schemas written by hand, and a validator for the keywords tools need.

import { JSONValue, parseString } from "./json";

/**
 * Schema is a JSON Schema held as a JSONValue. Build one with the static
 * constructors and chain the refinements, or pass a hand-written schema to
 * Schema.raw:
 *
 *   Schema.object()
 *     .prop("channel", Schema.string().describe("Channel ID"), true)
 *     .prop("limit", Schema.integer().min(1).max(1000).default(JSONValue.integer(100)))
 *
 * Object schemas built here are closed (additionalProperties false), like
 * the Go PDK's, so a misspelled argument is refused instead of ignored.
 */
export class Schema {
  /** error is set when a raw schema could not be parsed. */
  error: string = "";

  constructor(public json: JSONValue) {}

  static ofType(type: string): Schema {
    return new Schema(JSONValue.object().setString("type", type));
  }

  static string(): Schema {
    return Schema.ofType("string");
  }
  static integer(): Schema {
    return Schema.ofType("integer");
  }
  static number(): Schema {
    return Schema.ofType("number");
  }
  static boolean(): Schema {
    return Schema.ofType("boolean");
  }
  /** any accepts every JSON value. */
  static any(): Schema {
    return new Schema(JSONValue.object());
  }

  static array(items: Schema): Schema {
    const s = Schema.ofType("array");
    s.json.set("items", items.json);
    return s;
  }

  /** object is a closed object without properties yet. */
  static object(): Schema {
    const s = Schema.ofType("object");
    s.json.set("properties", JSONValue.object());
    s.json.set("additionalProperties", JSONValue.bool(false));
    return s;
  }

  /** openObject is an object that admits any members. */
  static openObject(): Schema {
    return Schema.ofType("object");
  }

  /** raw parses a hand-written schema; a parse error fails the manifest. */
  static raw(text: string): Schema {
    const r = parseString(text);
    if (!r.ok) {
      const s = new Schema(JSONValue.object());
      s.error = "not valid JSON: " + r.error + " at byte " + r.offset.toString();
      return s;
    }
    const s = new Schema(r.value!);
    if (!s.json.isObject) s.error = "a schema must be a JSON object";
    return s;
  }

  describe(text: string): Schema {
    this.json.setString("description", text);
    return this;
  }

  /** prop adds a property; required lists it in "required". */
  prop(name: string, schema: Schema, required: bool = false): Schema {
    let props = this.json.get("properties");
    if (props == null) {
      props = JSONValue.object();
      this.json.set("properties", props);
    }
    props.set(name, schema.json);
    if (schema.error.length > 0 && this.error.length == 0) this.error = name + ": " + schema.error;
    if (required) {
      let req = this.json.get("required");
      if (req == null) {
        req = JSONValue.array();
        this.json.set("required", req);
      }
      req.push(JSONValue.string(name));
    }
    return this;
  }

  /** additional allows members not listed, each matching schema. */
  additional(schema: Schema): Schema {
    this.json.set("additionalProperties", schema.json);
    return this;
  }

  min(n: f64): Schema {
    this.json.set("minimum", JSONValue.number(n));
    return this;
  }

  max(n: f64): Schema {
    this.json.set("maximum", JSONValue.number(n));
    return this;
  }

  minLength(n: i32): Schema {
    this.json.set("minLength", JSONValue.integer(n));
    return this;
  }

  maxLength(n: i32): Schema {
    this.json.set("maxLength", JSONValue.integer(n));
    return this;
  }

  minItems(n: i32): Schema {
    this.json.set("minItems", JSONValue.integer(n));
    return this;
  }

  maxItems(n: i32): Schema {
    this.json.set("maxItems", JSONValue.integer(n));
    return this;
  }

  enumOf(values: Array<string>): Schema {
    this.json.set("enum", JSONValue.stringArray(values));
    return this;
  }

  /** format sets an informational format such as "date-time" (not checked). */
  format(f: string): Schema {
    this.json.setString("format", f);
    return this;
  }

  default(v: JSONValue): Schema {
    this.json.set("default", v);
    return this;
  }

  defaultString(s: string): Schema {
    return this.default(JSONValue.string(s));
  }

  defaultInteger(n: i64): Schema {
    return this.default(JSONValue.integer(n));
  }

  defaultBool(b: bool): Schema {
    return this.default(JSONValue.bool(b));
  }
}

/** Violation is the first place a value breaks its schema. */
export class Violation {
  constructor(
    public field: string,
    public message: string,
  ) {}

  /** text is `field "x": message`, or the message alone at the top level. */
  get text(): string {
    return this.field.length > 0 ? 'field "' + this.field + '": ' + this.message : "the input " + this.message;
  }
}

/**
 * validate checks v against schema and fills in the defaults of absent
 * object members (in v itself). It understands type (a name or a list),
 * enum, const, minimum, maximum, exclusiveMinimum, exclusiveMaximum,
 * minLength, maxLength (in code points), minItems, maxItems, properties,
 * required, additionalProperties and items; other keywords (pattern, format,
 * oneOf, ...) are passed to the agent but not checked here.
 */
export function validate(schema: JSONValue, v: JSONValue, path: string = ""): Violation | null {
  if (!schema.isObject) return null;
  const type = schema.get("type");
  if (type != null) {
    let matched = false;
    if (type.isString) {
      matched = hasType(v, type.asString);
    } else if (type.isArray) {
      for (let i = 0; i < type.length && !matched; i++) matched = hasType(v, type.at(i)!.asString);
    } else {
      matched = true;
    }
    if (!matched) return new Violation(path, "must be " + describeType(type) + ", not " + kindName(v));
  }
  const en = schema.get("enum");
  if (en != null && en.isArray) {
    let found = false;
    for (let i = 0; i < en.length && !found; i++) found = en.at(i)!.equals(v);
    if (!found) return new Violation(path, "must be one of " + en.toString());
  }
  const cst = schema.get("const");
  if (cst != null && !cst.equals(v)) return new Violation(path, "must be " + cst.toString());
  if (v.isNumber) {
    const n = v.asNumber;
    const lo = schema.get("minimum");
    if (lo != null && lo.isNumber && n < lo.asNumber) return new Violation(path, "must be at least " + lo.numberText);
    const hi = schema.get("maximum");
    if (hi != null && hi.isNumber && n > hi.asNumber) return new Violation(path, "must be at most " + hi.numberText);
    const xlo = schema.get("exclusiveMinimum");
    if (xlo != null && xlo.isNumber && n <= xlo.asNumber) return new Violation(path, "must be more than " + xlo.numberText);
    const xhi = schema.get("exclusiveMaximum");
    if (xhi != null && xhi.isNumber && n >= xhi.asNumber) return new Violation(path, "must be less than " + xhi.numberText);
  } else if (v.isString) {
    const minL = schema.get("minLength");
    const maxL = schema.get("maxLength");
    if (minL != null || maxL != null) {
      const n = codePoints(v.asString);
      if (minL != null && n < minL.asInteger) return new Violation(path, "must be at least " + minL.numberText + " characters long");
      if (maxL != null && n > maxL.asInteger) return new Violation(path, "must be at most " + maxL.numberText + " characters long");
    }
  } else if (v.isArray) {
    const minI = schema.get("minItems");
    if (minI != null && v.length < minI.asInteger) return new Violation(path, "must have at least " + minI.numberText + " items");
    const maxI = schema.get("maxItems");
    if (maxI != null && v.length > maxI.asInteger) return new Violation(path, "must have at most " + maxI.numberText + " items");
    const items = schema.get("items");
    if (items != null) {
      for (let i = 0; i < v.length; i++) {
        const bad = validate(items, v.at(i)!, path + "[" + i.toString() + "]");
        if (bad != null) return bad;
      }
    }
  } else if (v.isObject) {
    return validateObject(schema, v, path);
  }
  return null;
}

function validateObject(schema: JSONValue, v: JSONValue, path: string): Violation | null {
  const props = schema.get("properties");
  const req = schema.get("required");
  if (req != null && req.isArray) {
    for (let i = 0; i < req.length; i++) {
      const name = req.at(i)!.asString;
      if (!v.has(name)) return new Violation(join(path, name), "is required");
    }
  }
  const additional = schema.get("additionalProperties");
  for (let i = 0; i < v.length; i++) {
    const name = v.keyAt(i);
    const sub = props != null ? props.get(name) : null;
    if (sub != null) {
      const bad = validate(sub, v.at(i)!, join(path, name));
      if (bad != null) return bad;
      continue;
    }
    if (additional == null) continue;
    if (additional.isBool) {
      if (!additional.asBool) return new Violation(join(path, name), "is not a known field");
      continue;
    }
    const bad = validate(additional, v.at(i)!, join(path, name));
    if (bad != null) return bad;
  }
  if (props != null) {
    for (let i = 0; i < props.length; i++) {
      const name = props.keyAt(i);
      const def = props.at(i)!.get("default");
      if (def != null && !v.has(name)) v.set(name, def);
    }
  }
  return null;
}

function join(path: string, name: string): string {
  return path.length == 0 ? name : path + "." + name;
}

function hasType(v: JSONValue, type: string): bool {
  if (type == "object") return v.isObject;
  if (type == "array") return v.isArray;
  if (type == "string") return v.isString;
  if (type == "integer") return v.isInteger;
  if (type == "number") return v.isNumber;
  if (type == "boolean") return v.isBool;
  if (type == "null") return v.isNull;
  return false;
}

function describeType(type: JSONValue): string {
  if (type.isString) return articled(type.asString);
  let out = "";
  for (let i = 0; i < type.length; i++) {
    if (i > 0) out += i == type.length - 1 ? " or " : ", ";
    out += articled(type.at(i)!.asString);
  }
  return out;
}

function articled(type: string): string {
  if (type == "null") return "null";
  if (type == "integer" || type == "object" || type == "array") return "an " + type;
  return "a " + type;
}

/** kindName names the JSON type of v. */
export function kindName(v: JSONValue): string {
  if (v.isNull) return "null";
  if (v.isBool) return "a boolean";
  if (v.isNumber) return "a number";
  if (v.isString) return "a string";
  if (v.isArray) return "an array";
  return "an object";
}

function codePoints(s: string): i64 {
  let n: i64 = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
      const p = s.charCodeAt(i - 1);
      if (p >= 0xd800 && p <= 0xdbff) continue;
    }
    n++;
  }
  return n;
}
