// A small JSON reader and writer. The reader is written for hostile input:
// it never reads outside the bytes it was given, caps nesting depth, decodes
// every escape (\uXXXX surrogate pairs included) and replaces ill-formed
// UTF-8 with U+FFFD. AssemblyScript has no exceptions, so failures are
// returned as values, never thrown.

import { ByteBuffer, decodeRune } from "./bytes";

/** DEFAULT_MAX_DEPTH is how deeply arrays and objects may nest by default. */
export const DEFAULT_MAX_DEPTH: i32 = 128;

/** INDEX_AFTER_MEMBERS is the object size above which lookups use a hash index. */
const INDEX_AFTER_MEMBERS: i32 = 16;

/** Kind is the type of a JSONValue. */
export enum Kind {
  Null = 0,
  Bool = 1,
  Number = 2,
  String = 3,
  Array = 4,
  Object = 5,
}

/**
 * JSONValue is one parsed or built JSON value. Objects keep their keys in
 * input order; a lookup finds the last occurrence of a duplicated key, as
 * most decoders do.
 */
export class JSONValue {
  kind: Kind = Kind.Null;
  private boolValue: bool = false;
  private numValue: f64 = 0;
  /** numText is the number as written in the input or formatted when built. */
  private numText: string = "";
  private strValue: string = "";
  /**
   * src holds the bytes of a string not decoded yet: long strings of a
   * parsed document are decoded on first use, so the fields a plugin never
   * reads cost no UTF-16 copy. srcOff and srcLen locate the string, quotes
   * included, in src; the parser has already checked it.
   */
  private src: ArrayBuffer | null = null;
  private srcOff: i32 = 0;
  private srcLen: i32 = 0;
  private list: Array<JSONValue> | null = null;
  private names: Array<string> | null = null;
  /** index maps member names to their last position; built once an object is large. */
  private index: Map<string, i32> | null = null;

  static null(): JSONValue {
    return new JSONValue();
  }

  static bool(b: bool): JSONValue {
    const v = new JSONValue();
    v.kind = Kind.Bool;
    v.boolValue = b;
    return v;
  }

  /** number builds a number; NaN and infinities are written as null. */
  static number(n: f64): JSONValue {
    const v = new JSONValue();
    v.kind = Kind.Number;
    v.numValue = n;
    v.numText = formatNumber(n);
    return v;
  }

  static integer(n: i64): JSONValue {
    const v = new JSONValue();
    v.kind = Kind.Number;
    v.numValue = <f64>n;
    v.numText = n.toString();
    return v;
  }

  /** numberText builds a number from its JSON text, which must be valid. */
  static numberText(text: string, n: f64): JSONValue {
    const v = new JSONValue();
    v.kind = Kind.Number;
    v.numValue = n;
    v.numText = text;
    return v;
  }

  static string(s: string): JSONValue {
    const v = new JSONValue();
    v.kind = Kind.String;
    v.strValue = s;
    return v;
  }

  /** lazyString is a string whose JSON text (quotes included) is at src[off, off+len). */
  static lazyString(src: ArrayBuffer, off: i32, len: i32): JSONValue {
    const v = new JSONValue();
    v.kind = Kind.String;
    v.src = src;
    v.srcOff = off;
    v.srcLen = len;
    return v;
  }

  /** str decodes a lazy string once and returns the string. */
  private str(): string {
    const src = this.src;
    if (src != null) {
      const p = new Parser(changetype<usize>(src) + <usize>this.srcOff, this.srcLen, 1, null);
      const decoded = p.parseString();
      this.strValue = decoded != null ? decoded : "";
      this.src = null;
    }
    return this.strValue;
  }

  static array(): JSONValue {
    const v = new JSONValue();
    v.kind = Kind.Array;
    v.list = new Array<JSONValue>();
    return v;
  }

  static object(): JSONValue {
    const v = new JSONValue();
    v.kind = Kind.Object;
    v.list = new Array<JSONValue>();
    v.names = new Array<string>();
    return v;
  }

  /** stringArray builds an array of strings. */
  static stringArray(items: Array<string>): JSONValue {
    const v = JSONValue.array();
    for (let i = 0; i < items.length; i++) v.push(JSONValue.string(items[i]));
    return v;
  }

  get isNull(): bool {
    return this.kind == Kind.Null;
  }
  get isBool(): bool {
    return this.kind == Kind.Bool;
  }
  get isNumber(): bool {
    return this.kind == Kind.Number;
  }
  get isString(): bool {
    return this.kind == Kind.String;
  }
  get isArray(): bool {
    return this.kind == Kind.Array;
  }
  get isObject(): bool {
    return this.kind == Kind.Object;
  }

  /** isInteger reports whether the value is a number without a fraction. */
  get isInteger(): bool {
    return this.kind == Kind.Number && isFinite(this.numValue) && Math.floor(this.numValue) == this.numValue;
  }

  /** asBool is the boolean, or false for any other kind. */
  get asBool(): bool {
    return this.kind == Kind.Bool && this.boolValue;
  }

  /** asNumber is the number, or 0 for any other kind. */
  get asNumber(): f64 {
    return this.kind == Kind.Number ? this.numValue : 0;
  }

  /** asInteger is the number truncated to an i64 (saturating), or 0. */
  get asInteger(): i64 {
    if (this.kind != Kind.Number || isNaN(this.numValue)) return 0;
    if (this.numValue >= 9.2e18) return i64.MAX_VALUE;
    if (this.numValue <= -9.2e18) return i64.MIN_VALUE;
    return <i64>this.numValue;
  }

  /** numberText is the number's JSON text, or "" for any other kind. */
  get numberText(): string {
    return this.kind == Kind.Number ? this.numText : "";
  }

  /** asString is the string, or "" for any other kind. */
  get asString(): string {
    return this.kind == Kind.String ? this.str() : "";
  }

  /** length is the number of items or members; 0 for scalars. */
  get length(): i32 {
    const l = this.list;
    return l == null ? 0 : l.length;
  }

  /** at returns item (or member value) i, or null when out of range. */
  at(i: i32): JSONValue | null {
    const l = this.list;
    if (l == null || i < 0 || i >= l.length) return null;
    return unchecked(l[i]);
  }

  /** keyAt returns the name of member i of an object, or "". */
  keyAt(i: i32): string {
    const n = this.names;
    if (n == null || i < 0 || i >= n.length) return "";
    return unchecked(n[i]);
  }

  private indexOf(key: string): i32 {
    const n = this.names;
    if (n == null) return -1;
    if (n.length <= INDEX_AFTER_MEMBERS) {
      for (let i = n.length - 1; i >= 0; i--) {
        if (unchecked(n[i]) == key) return i;
      }
      return -1;
    }
    let idx = this.index;
    if (idx == null) {
      idx = new Map<string, i32>();
      for (let i = 0; i < n.length; i++) idx.set(unchecked(n[i]), i);
      this.index = idx;
    }
    return idx.has(key) ? idx.get(key) : -1;
  }

  /**
   * append adds a member without looking for an earlier one of the same
   * name (the parser keeps duplicates, as they were sent; lookups see the
   * last). It keeps building an object of n members O(n).
   */
  append(key: string, value: JSONValue): JSONValue {
    if (this.kind != Kind.Object) return this;
    this.names!.push(key);
    this.list!.push(value);
    const idx = this.index;
    if (idx != null) idx.set(key, this.names!.length - 1);
    return this;
  }

  /** get returns the member named key of an object, or null. */
  get(key: string): JSONValue | null {
    const i = this.indexOf(key);
    return i < 0 ? null : unchecked(this.list![i]);
  }

  /** has reports whether an object has a member named key. */
  has(key: string): bool {
    return this.indexOf(key) >= 0;
  }

  /** getString is the string member key, or def when absent or not a string. */
  getString(key: string, def: string = ""): string {
    const v = this.get(key);
    return v != null && v.isString ? v.asString : def;
  }

  /** getInteger is the number member key as an i64, or def. */
  getInteger(key: string, def: i64 = 0): i64 {
    const v = this.get(key);
    return v != null && v.isNumber ? v.asInteger : def;
  }

  /** getBool is the boolean member key, or def. */
  getBool(key: string, def: bool = false): bool {
    const v = this.get(key);
    return v != null && v.isBool ? v.asBool : def;
  }

  /** set adds or replaces the member key of an object and returns this. */
  set(key: string, value: JSONValue): JSONValue {
    if (this.kind != Kind.Object) return this;
    const i = this.indexOf(key);
    if (i >= 0) {
      this.list![i] = value;
      return this;
    }
    return this.append(key, value);
  }

  setString(key: string, s: string): JSONValue {
    return this.set(key, JSONValue.string(s));
  }

  setInteger(key: string, n: i64): JSONValue {
    return this.set(key, JSONValue.integer(n));
  }

  setBool(key: string, b: bool): JSONValue {
    return this.set(key, JSONValue.bool(b));
  }

  /** copyFrom copies member key of src (as the name "as" when given) when src has it. */
  copyFrom(src: JSONValue, key: string, as: string = ""): JSONValue {
    const v = src.get(key);
    if (v != null) this.set(as.length > 0 ? as : key, v);
    return this;
  }

  /** push appends to an array and returns this. */
  push(value: JSONValue): JSONValue {
    if (this.kind == Kind.Array) this.list!.push(value);
    return this;
  }

  /** equals compares two values structurally (object member order ignored). */
  equals(other: JSONValue): bool {
    if (this.kind != other.kind) return false;
    switch (this.kind) {
      case Kind.Null:
        return true;
      case Kind.Bool:
        return this.boolValue == other.boolValue;
      case Kind.Number:
        return this.numValue == other.numValue;
      case Kind.String:
        return this.str() == other.str();
      case Kind.Array: {
        if (this.length != other.length) return false;
        for (let i = 0; i < this.length; i++) {
          if (!this.at(i)!.equals(other.at(i)!)) return false;
        }
        return true;
      }
    }
    if (this.length != other.length) return false;
    for (let i = 0; i < this.length; i++) {
      const o = other.get(this.keyAt(i));
      if (o == null || !this.at(i)!.equals(o)) return false;
    }
    return true;
  }

  /** write appends the value's JSON text to w. */
  write(w: JSONWriter): void {
    switch (this.kind) {
      case Kind.Null:
        w.null();
        return;
      case Kind.Bool:
        w.bool(this.boolValue);
        return;
      case Kind.Number:
        w.numberText(this.numText);
        return;
      case Kind.String:
        w.string(this.str());
        return;
      case Kind.Array: {
        w.beginArray();
        const l = this.list!;
        for (let i = 0; i < l.length; i++) unchecked(l[i]).write(w);
        w.endArray();
        return;
      }
    }
    w.beginObject();
    const l = this.list!;
    const n = this.names!;
    for (let i = 0; i < l.length; i++) {
      w.key(unchecked(n[i]));
      unchecked(l[i]).write(w);
    }
    w.endObject();
  }

  /** toString returns the value as compact JSON text. */
  toString(): string {
    const w = new JSONWriter();
    this.write(w);
    return w.toString();
  }
}

/** formatNumber writes n as JSON: integers without a fraction, NaN and infinities as null. */
export function formatNumber(n: f64): string {
  if (!isFinite(n)) return "null";
  if (Math.floor(n) == n && Math.abs(n) < 9007199254740992.0) return (<i64>n).toString();
  return n.toString();
}

/** ParseResult is a parsed value, or an error with the byte offset it was found at. */
export class ParseResult {
  value: JSONValue | null = null;
  error: string = "";
  offset: i32 = 0;

  get ok(): bool {
    return this.value != null;
  }
}

/**
 * parseJSON parses n bytes at ptr. Nothing outside [ptr, ptr+n) is read. The
 * result does not refer to those bytes afterwards.
 */
export function parseJSON(ptr: usize, n: i32, maxDepth: i32 = DEFAULT_MAX_DEPTH): ParseResult {
  return parseIn(ptr, n, maxDepth, null);
}

function parseIn(ptr: usize, n: i32, maxDepth: i32, owner: ArrayBuffer | null): ParseResult {
  const p = new Parser(ptr, n, maxDepth, owner);
  const res = new ParseResult();
  p.skipSpace();
  const v = p.parseValue(0);
  if (v != null) {
    p.skipSpace();
    if (p.pos < p.end) p.fail("unexpected " + p.describe() + " after the JSON value");
  }
  if (p.error.length > 0) {
    res.error = p.error;
    res.offset = p.errorAt;
    return res;
  }
  res.value = v;
  return res;
}

/**
 * parseBytes parses a byte array. Long strings keep a reference to b's
 * buffer and are decoded when first read, so b must not be changed while
 * the result is in use.
 */
export function parseBytes(b: Uint8Array, maxDepth: i32 = DEFAULT_MAX_DEPTH): ParseResult {
  return parseIn(b.dataStart, b.length, maxDepth, b.buffer);
}

/** parseString parses JSON text held in a string. */
export function parseString(s: string, maxDepth: i32 = DEFAULT_MAX_DEPTH): ParseResult {
  const buf = new ByteBuffer(s.length + 16);
  buf.utf8(s);
  return parseJSON(buf.dataStart, buf.length, maxDepth);
}

/** SCRATCH_KEEP_UNITS is the largest scratch buffer kept between strings. */
const SCRATCH_KEEP_UNITS: i32 = 1 << 16;

/** LAZY_STRING_BYTES is the length from which parseBytes decodes strings on first use. */
const LAZY_STRING_BYTES: i32 = 24;

/** stringScratch is reused by every parser to collect UTF-16 units. */
let stringScratch = new Uint16Array(256);

class Parser {
  pos: i32 = 0;
  error: string = "";
  errorAt: i32 = 0;

  constructor(
    private ptr: usize,
    public end: i32,
    private maxDepth: i32,
    /** owner holds the bytes at ptr when strings may be decoded lazily. */
    private owner: ArrayBuffer | null,
  ) {}

  @inline
  private peek(): u32 {
    return <u32>load<u8>(this.ptr + <usize>this.pos);
  }

  fail(msg: string): void {
    if (this.error.length == 0) {
      this.error = msg;
      this.errorAt = this.pos;
    }
  }

  /** describe names the byte at pos for an error message. */
  describe(): string {
    if (this.pos >= this.end) return "end of input";
    const c = this.peek();
    if (c >= 0x20 && c < 0x7f) return "character '" + String.fromCharCode(c) + "'";
    return "byte 0x" + c.toString(16);
  }

  skipSpace(): void {
    while (this.pos < this.end) {
      const c = this.peek();
      if (c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09) return;
      this.pos++;
    }
  }

  parseValue(depth: i32): JSONValue | null {
    if (this.pos >= this.end) {
      this.fail("unexpected end of input, expected a value");
      return null;
    }
    const c = this.peek();
    switch (c) {
      case 0x7b: // {
        return this.parseObject(depth + 1);
      case 0x5b: // [
        return this.parseArray(depth + 1);
      case 0x22: {
        // "
        const owner = this.owner;
        if (owner != null) return this.scanString(owner);
        const s = this.parseString();
        return s == null ? null : JSONValue.string(s);
      }
      case 0x74: // t
        return this.literal("true") ? JSONValue.bool(true) : null;
      case 0x66: // f
        return this.literal("false") ? JSONValue.bool(false) : null;
      case 0x6e: // n
        return this.literal("null") ? JSONValue.null() : null;
    }
    if (c == 0x2d || (c >= 0x30 && c <= 0x39)) return this.parseNumber();
    this.fail("unexpected " + this.describe() + ", expected a value");
    return null;
  }

  private literal(word: string): bool {
    const n = word.length;
    if (this.end - this.pos < n) {
      this.fail("invalid literal, expected " + word);
      return false;
    }
    for (let i = 0; i < n; i++) {
      if (<u32>load<u8>(this.ptr + <usize>(this.pos + i)) != <u32>word.charCodeAt(i)) {
        this.fail("invalid literal, expected " + word);
        return false;
      }
    }
    this.pos += n;
    return true;
  }

  private digits(): i32 {
    const start = this.pos;
    while (this.pos < this.end) {
      const c = this.peek();
      if (c < 0x30 || c > 0x39) break;
      this.pos++;
    }
    return this.pos - start;
  }

  private parseNumber(): JSONValue | null {
    const start = this.pos;
    if (this.peek() == 0x2d) this.pos++;
    if (this.pos >= this.end) {
      this.fail("invalid number: no digits");
      return null;
    }
    if (this.peek() == 0x30) {
      this.pos++;
    } else if (this.digits() == 0) {
      this.fail("invalid number: no digits");
      return null;
    }
    if (this.pos < this.end && this.peek() == 0x2e) {
      this.pos++;
      if (this.digits() == 0) {
        this.fail("invalid number: no digits after the decimal point");
        return null;
      }
    }
    if (this.pos < this.end && (this.peek() == 0x65 || this.peek() == 0x45)) {
      this.pos++;
      if (this.pos < this.end && (this.peek() == 0x2b || this.peek() == 0x2d)) this.pos++;
      if (this.digits() == 0) {
        this.fail("invalid number: no digits in the exponent");
        return null;
      }
    }
    const text = String.UTF8.decodeUnsafe(this.ptr + <usize>start, <usize>(this.pos - start));
    return JSONValue.numberText(text, parseFloat(text));
  }

  private hex4(): i32 {
    if (this.end - this.pos < 4) return -1;
    let v = 0;
    for (let i = 0; i < 4; i++) {
      const c = <i32>load<u8>(this.ptr + <usize>(this.pos + i));
      let d: i32;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x61 + 10;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x41 + 10;
      else return -1;
      v = (v << 4) | d;
    }
    this.pos += 4;
    return v;
  }

  /**
   * scanString checks the string at pos as parseString would and returns
   * it undecoded when it is long (decoded on first use), or decoded now.
   */
  private scanString(owner: ArrayBuffer): JSONValue | null {
    const start = this.pos;
    let i = this.pos + 1;
    while (true) {
      if (i >= this.end) {
        this.pos = i;
        this.fail("unterminated string");
        return null;
      }
      const c = <u32>load<u8>(this.ptr + <usize>i);
      if (c == 0x22) break;
      if (c < 0x20 || c == 0x5c) {
        // Escapes and control characters: let parseString check and report them.
        this.pos = start;
        const s = this.parseString();
        return s == null ? null : JSONValue.string(s);
      }
      i++;
    }
    const len = i + 1 - start;
    if (len < LAZY_STRING_BYTES) {
      const s = this.parseString();
      return s == null ? null : JSONValue.string(s);
    }
    this.pos = i + 1;
    const off = <i32>(this.ptr + <usize>start - changetype<usize>(owner));
    return JSONValue.lazyString(owner, off, len);
  }

  /** parseString reads a string starting at its opening quote. */
  parseString(): string | null {
    this.pos++; // opening quote
    let units = stringScratch;
    let o = 0;
    while (true) {
      if (this.pos >= this.end) {
        this.fail("unterminated string");
        return null;
      }
      // Two units at most per step: make sure they fit.
      if (o + 2 > units.length) {
        const bigger = new Uint16Array(units.length * 2);
        memory.copy(bigger.dataStart, units.dataStart, <usize>o << 1);
        units = bigger;
        stringScratch = bigger;
      }
      const c = this.peek();
      if (c == 0x22) {
        this.pos++;
        break;
      }
      if (c < 0x20) {
        this.fail("control character 0x" + c.toString(16) + " in a string");
        return null;
      }
      if (c == 0x5c) {
        this.pos++;
        if (this.pos >= this.end) {
          this.fail("unterminated escape in a string");
          return null;
        }
        const e = this.peek();
        this.pos++;
        let u: i32 = 0;
        switch (e) {
          case 0x22:
            u = 0x22;
            break;
          case 0x5c:
            u = 0x5c;
            break;
          case 0x2f:
            u = 0x2f;
            break;
          case 0x62:
            u = 0x08;
            break;
          case 0x66:
            u = 0x0c;
            break;
          case 0x6e:
            u = 0x0a;
            break;
          case 0x72:
            u = 0x0d;
            break;
          case 0x74:
            u = 0x09;
            break;
          case 0x75: {
            u = this.hex4();
            if (u < 0) {
              this.fail("invalid \\u escape: four hex digits expected");
              return null;
            }
            break;
          }
          default:
            this.pos--;
            this.fail("invalid escape \\" + String.fromCharCode(e) + " in a string");
            return null;
        }
        // A \uD83D\uDE00 pair arrives as two escapes; UTF-16 keeps both units
        // as they are, so a pair stays a pair and a lone surrogate stays lone.
        unchecked((units[o++] = <u16>u));
        continue;
      }
      if (c < 0x80) {
        unchecked((units[o++] = <u16>c));
        this.pos++;
        continue;
      }
      const r = decodeRune(this.ptr, this.pos, this.end);
      const cp = <u32>(r & 0xffffffff);
      this.pos += <i32>(r >>> 32);
      if (cp >= 0x10000) {
        const v = cp - 0x10000;
        unchecked((units[o++] = <u16>(0xd800 + (v >> 10))));
        unchecked((units[o++] = <u16>(0xdc00 + (v & 0x3ff))));
      } else {
        unchecked((units[o++] = <u16>cp));
      }
    }
    const s = String.UTF16.decodeUnsafe(units.dataStart, <usize>o << 1);
    // A huge string must not pin a huge scratch buffer for the instance's life.
    if (units.length > SCRATCH_KEEP_UNITS) stringScratch = new Uint16Array(256);
    return s;
  }

  private parseArray(depth: i32): JSONValue | null {
    if (depth > this.maxDepth) {
      this.fail("nesting deeper than " + this.maxDepth.toString() + " levels");
      return null;
    }
    this.pos++; // [
    const arr = JSONValue.array();
    this.skipSpace();
    if (this.pos < this.end && this.peek() == 0x5d) {
      this.pos++;
      return arr;
    }
    while (true) {
      this.skipSpace();
      const v = this.parseValue(depth);
      if (v == null) return null;
      arr.push(v);
      this.skipSpace();
      if (this.pos >= this.end) {
        this.fail("unterminated array");
        return null;
      }
      const c = this.peek();
      this.pos++;
      if (c == 0x5d) return arr;
      if (c != 0x2c) {
        this.pos--;
        this.fail("unexpected " + this.describe() + " in an array, expected ',' or ']'");
        return null;
      }
    }
  }

  private parseObject(depth: i32): JSONValue | null {
    if (depth > this.maxDepth) {
      this.fail("nesting deeper than " + this.maxDepth.toString() + " levels");
      return null;
    }
    this.pos++; // {
    const obj = JSONValue.object();
    this.skipSpace();
    if (this.pos < this.end && this.peek() == 0x7d) {
      this.pos++;
      return obj;
    }
    while (true) {
      this.skipSpace();
      if (this.pos >= this.end || this.peek() != 0x22) {
        this.fail("unexpected " + this.describe() + ", expected a member name");
        return null;
      }
      const key = this.parseString();
      if (key == null) return null;
      this.skipSpace();
      if (this.pos >= this.end || this.peek() != 0x3a) {
        this.fail("unexpected " + this.describe() + ", expected ':'");
        return null;
      }
      this.pos++;
      this.skipSpace();
      const v = this.parseValue(depth);
      if (v == null) return null;
      obj.append(key, v);
      this.skipSpace();
      if (this.pos >= this.end) {
        this.fail("unterminated object");
        return null;
      }
      const c = this.peek();
      this.pos++;
      if (c == 0x7d) return obj;
      if (c != 0x2c) {
        this.pos--;
        this.fail("unexpected " + this.describe() + " in an object, expected ',' or '}'");
        return null;
      }
    }
  }
}

const HEX = "0123456789abcdef";

/**
 * JSONWriter builds compact JSON text. It inserts commas itself; callers
 * pair begin/end calls and put key() before each member value.
 */
export class JSONWriter {
  readonly buf: ByteBuffer;
  /** first[d] is true until the container at depth d has a member. */
  private first: Array<bool> = [true];
  private afterKey: bool = false;

  constructor(initial: i32 = 256) {
    this.buf = new ByteBuffer(initial);
  }

  /** overflowed reports that the output passed the buffer cap and is cut. */
  get overflowed(): bool {
    return this.buf.overflowed;
  }

  private separate(): void {
    if (this.afterKey) {
      this.afterKey = false;
      return;
    }
    const d = this.first.length - 1;
    if (unchecked(this.first[d])) {
      unchecked((this.first[d] = false));
    } else {
      this.buf.byte(0x2c);
    }
  }

  beginObject(): JSONWriter {
    this.separate();
    this.buf.byte(0x7b);
    this.first.push(true);
    return this;
  }

  endObject(): JSONWriter {
    if (this.first.length > 1) this.first.pop();
    this.buf.byte(0x7d);
    return this;
  }

  beginArray(): JSONWriter {
    this.separate();
    this.buf.byte(0x5b);
    this.first.push(true);
    return this;
  }

  endArray(): JSONWriter {
    if (this.first.length > 1) this.first.pop();
    this.buf.byte(0x5d);
    return this;
  }

  /** key writes a member name; the next call writes its value. */
  key(k: string): JSONWriter {
    this.separate();
    this.quoted(k);
    this.buf.byte(0x3a);
    this.afterKey = true;
    return this;
  }

  string(s: string): JSONWriter {
    this.separate();
    this.quoted(s);
    return this;
  }

  /** nullableString writes s, or null when s is null. */
  nullableString(s: string | null): JSONWriter {
    if (s == null) return this.null();
    return this.string(s);
  }

  integer(n: i64): JSONWriter {
    this.separate();
    this.buf.ascii(n.toString());
    return this;
  }

  number(n: f64): JSONWriter {
    this.separate();
    this.buf.ascii(formatNumber(n));
    return this;
  }

  /** numberText writes an already valid JSON number. */
  numberText(text: string): JSONWriter {
    this.separate();
    this.buf.ascii(text);
    return this;
  }

  bool(b: bool): JSONWriter {
    this.separate();
    this.buf.ascii(b ? "true" : "false");
    return this;
  }

  null(): JSONWriter {
    this.separate();
    this.buf.ascii("null");
    return this;
  }

  value(v: JSONValue | null): JSONWriter {
    if (v == null) return this.null();
    v.write(this);
    return this;
  }

  /** field writes key and value in one call. */
  field(k: string, v: JSONValue | null): JSONWriter {
    this.key(k);
    return this.value(v);
  }

  stringField(k: string, s: string): JSONWriter {
    this.key(k);
    return this.string(s);
  }

  /**
   * quoted writes s as a JSON string. Quotes, backslashes and control
   * characters are escaped; a surrogate pair becomes one 4-byte UTF-8
   * sequence and a lone surrogate is kept as a \uXXXX escape, so nothing is
   * lost and the output stays valid UTF-8.
   */
  private quoted(s: string): void {
    const b = this.buf;
    b.byte(0x22);
    const n = s.length;
    for (let i = 0; i < n; i++) {
      const c = <u32>s.charCodeAt(i);
      if (c >= 0x20 && c < 0x80 && c != 0x22 && c != 0x5c) {
        b.byte(<u8>c);
        continue;
      }
      if (c == 0x22 || c == 0x5c) {
        b.byte(0x5c);
        b.byte(<u8>c);
        continue;
      }
      if (c < 0x20) {
        b.byte(0x5c);
        if (c == 0x0a) b.byte(0x6e);
        else if (c == 0x0d) b.byte(0x72);
        else if (c == 0x09) b.byte(0x74);
        else if (c == 0x08) b.byte(0x62);
        else if (c == 0x0c) b.byte(0x66);
        else this.escapeUnit(c);
        continue;
      }
      if (c >= 0xd800 && c <= 0xdfff) {
        if (c <= 0xdbff && i + 1 < n) {
          const d = <u32>s.charCodeAt(i + 1);
          if (d >= 0xdc00 && d <= 0xdfff) {
            b.codePoint(0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00));
            i++;
            continue;
          }
        }
        b.byte(0x5c);
        this.escapeUnit(c);
        continue;
      }
      b.codePoint(c);
    }
    b.byte(0x22);
  }

  /** escapeUnit writes "u" and four hex digits (the backslash is written by the caller). */
  private escapeUnit(c: u32): void {
    const b = this.buf;
    b.byte(0x75);
    b.byte(<u8>HEX.charCodeAt((c >> 12) & 15));
    b.byte(<u8>HEX.charCodeAt((c >> 8) & 15));
    b.byte(<u8>HEX.charCodeAt((c >> 4) & 15));
    b.byte(<u8>HEX.charCodeAt(c & 15));
  }

  toBytes(): Uint8Array {
    return this.buf.toBytes();
  }

  toString(): string {
    return this.buf.toString();
  }
}

/** quoteJSON returns s as a JSON string literal. */
export function quoteJSON(s: string): string {
  const w = new JSONWriter(s.length + 8);
  w.string(s);
  return w.toString();
}
