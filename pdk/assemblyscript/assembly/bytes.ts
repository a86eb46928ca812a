// ByteBuffer is a growable byte array with a hard cap, used to build JSON,
// form bodies and URLs without intermediate strings.

/** MAX_BUFFER_BYTES caps every ByteBuffer: 16 MiB, the host's output ceiling. */
export const MAX_BUFFER_BYTES: i32 = 16 << 20;

/**
 * ByteBuffer accumulates bytes. Writes past its cap are dropped and set
 * `overflowed`, which callers check once at the end (AssemblyScript has no
 * exceptions to unwind with).
 */
export class ByteBuffer {
  private data: ArrayBuffer;
  length: i32 = 0;
  overflowed: bool = false;
  readonly cap: i32;

  constructor(initial: i32 = 256, cap: i32 = MAX_BUFFER_BYTES) {
    this.cap = cap;
    this.data = new ArrayBuffer(max(16, min(initial, cap)));
  }

  /** ensure makes room for n more bytes; false when the cap forbids it. */
  @inline
  private ensure(n: i32): bool {
    const need = <i64>this.length + <i64>n;
    if (need <= <i64>this.data.byteLength) return true;
    return this.grow(need);
  }

  private grow(need: i64): bool {
    if (this.overflowed || need > <i64>this.cap) {
      this.overflowed = true;
      return false;
    }
    let size = <i64>this.data.byteLength * 2;
    if (size < need) size = need;
    if (size > <i64>this.cap) size = <i64>this.cap;
    const next = new ArrayBuffer(<i32>size);
    memory.copy(changetype<usize>(next), changetype<usize>(this.data), <usize>this.length);
    this.data = next;
    return true;
  }

  /** dataStart is the address of the first byte; valid until the next write. */
  get dataStart(): usize {
    return changetype<usize>(this.data);
  }

  byte(b: u8): void {
    if (!this.ensure(1)) return;
    store<u8>(changetype<usize>(this.data) + <usize>this.length, b);
    this.length++;
  }

  /** ascii appends a string known to hold only ASCII characters. */
  ascii(s: string): void {
    const n = s.length;
    if (!this.ensure(n)) return;
    const dst = changetype<usize>(this.data) + <usize>this.length;
    const src = changetype<usize>(s);
    for (let i = 0; i < n; i++) {
      store<u8>(dst + <usize>i, <u8>load<u16>(src + (<usize>i << 1)));
    }
    this.length += n;
  }

  /** raw appends n bytes from address src. */
  raw(src: usize, n: i32): void {
    if (n <= 0 || !this.ensure(n)) return;
    memory.copy(changetype<usize>(this.data) + <usize>this.length, src, <usize>n);
    this.length += n;
  }

  bytes(b: Uint8Array): void {
    this.raw(b.dataStart, b.length);
  }

  /**
   * utf8 appends s encoded as UTF-8. A lone surrogate becomes U+FFFD, so
   * the output is always valid UTF-8.
   */
  utf8(s: string): void {
    const n = s.length;
    for (let i = 0; i < n; i++) {
      let c = <u32>s.charCodeAt(i);
      if (c < 0x80) {
        this.byte(<u8>c);
        continue;
      }
      if (c >= 0xd800 && c <= 0xdfff) {
        if (c <= 0xdbff && i + 1 < n) {
          const d = <u32>s.charCodeAt(i + 1);
          if (d >= 0xdc00 && d <= 0xdfff) {
            this.codePoint(0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00));
            i++;
            continue;
          }
        }
        c = 0xfffd;
      }
      this.codePoint(c);
    }
  }

  /** codePoint appends one Unicode scalar value as UTF-8. */
  codePoint(c: u32): void {
    if (c < 0x80) {
      this.byte(<u8>c);
    } else if (c < 0x800) {
      this.byte(<u8>(0xc0 | (c >> 6)));
      this.byte(<u8>(0x80 | (c & 0x3f)));
    } else if (c < 0x10000) {
      this.byte(<u8>(0xe0 | (c >> 12)));
      this.byte(<u8>(0x80 | ((c >> 6) & 0x3f)));
      this.byte(<u8>(0x80 | (c & 0x3f)));
    } else {
      this.byte(<u8>(0xf0 | (c >> 18)));
      this.byte(<u8>(0x80 | ((c >> 12) & 0x3f)));
      this.byte(<u8>(0x80 | ((c >> 6) & 0x3f)));
      this.byte(<u8>(0x80 | (c & 0x3f)));
    }
  }

  /** toBytes returns a copy of the content. */
  toBytes(): Uint8Array {
    const out = new Uint8Array(this.length);
    memory.copy(out.dataStart, changetype<usize>(this.data), <usize>this.length);
    return out;
  }

  /** toString decodes the content as UTF-8. */
  toString(): string {
    return decodeUTF8(changetype<usize>(this.data), this.length);
  }

  reset(): void {
    this.length = 0;
    this.overflowed = false;
  }
}

/**
 * decodeUTF8 decodes n bytes at ptr strictly: every byte that does not start
 * a well-formed sequence (overlong forms, surrogates and values above
 * U+10FFFF are not well formed) becomes one U+FFFD, as Go's decoder does.
 */
export function decodeUTF8(ptr: usize, n: i32): string {
  if (n <= 0) return "";
  // Never more UTF-16 units than bytes: decode straight into a string of
  // that size and shrink it (nothing else is allocated in between).
  const str = changetype<string>(__new(<usize>n << 1, idof<string>()));
  const out = changetype<usize>(str);
  let o: usize = 0;
  let i = 0;
  while (i < n) {
    const c0 = <u32>load<u8>(ptr + <usize>i);
    if (c0 < 0x80) {
      store<u16>(out + (o << 1), <u16>c0);
      o++;
      i++;
      continue;
    }
    const r = decodeRune(ptr, i, n);
    const cp = <u32>(r & 0xffffffff);
    const size = <i32>(r >>> 32);
    if (cp >= 0x10000) {
      const v = cp - 0x10000;
      store<u16>(out + (o << 1), <u16>(0xd800 + (v >> 10)));
      store<u16>(out + ((o + 1) << 1), <u16>(0xdc00 + (v & 0x3ff)));
      o += 2;
    } else {
      store<u16>(out + (o << 1), <u16>cp);
      o++;
    }
    i += size;
  }
  return changetype<string>(__renew(out, o << 1));
}

/**
 * decodeRune decodes the non-ASCII sequence at ptr[i] (n bytes in all). It
 * returns the code point in the low 32 bits and the bytes consumed in the
 * high 32 bits; an ill-formed sequence is U+FFFD of size 1.
 */
export function decodeRune(ptr: usize, i: i32, n: i32): u64 {
  const bad: u64 = (<u64>1 << 32) | 0xfffd;
  const c0 = <u32>load<u8>(ptr + <usize>i);
  let size = 0;
  let cp: u32 = 0;
  let lo: u32 = 0x80;
  let hi: u32 = 0xbf;
  if (c0 >= 0xc2 && c0 <= 0xdf) {
    size = 2;
    cp = c0 & 0x1f;
  } else if (c0 >= 0xe0 && c0 <= 0xef) {
    size = 3;
    cp = c0 & 0x0f;
    if (c0 == 0xe0) lo = 0xa0; // no overlong forms
    if (c0 == 0xed) hi = 0x9f; // no surrogates
  } else if (c0 >= 0xf0 && c0 <= 0xf4) {
    size = 4;
    cp = c0 & 0x07;
    if (c0 == 0xf0) lo = 0x90; // no overlong forms
    if (c0 == 0xf4) hi = 0x8f; // nothing above U+10FFFF
  } else {
    return bad;
  }
  if (i + size > n) return bad;
  for (let k = 1; k < size; k++) {
    const c = <u32>load<u8>(ptr + <usize>(i + k));
    if (k == 1) {
      if (c < lo || c > hi) return bad;
    } else if (c < 0x80 || c > 0xbf) {
      return bad;
    }
    cp = (cp << 6) | (c & 0x3f);
  }
  return (<u64>size << 32) | <u64>cp;
}
