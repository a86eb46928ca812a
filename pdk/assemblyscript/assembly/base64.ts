// Standard base64 (RFC 4648 section 4) with padding.

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** base64Encode encodes bytes with padding. */
export function base64Encode(b: Uint8Array): string {
  const n = b.length;
  const out = new Uint16Array(((n + 2) / 3) * 4);
  let o = 0;
  for (let i = 0; i < n; i += 3) {
    const b0 = <u32>b[i];
    const b1 = i + 1 < n ? <u32>b[i + 1] : 0;
    const b2 = i + 2 < n ? <u32>b[i + 2] : 0;
    const v = (b0 << 16) | (b1 << 8) | b2;
    out[o++] = <u16>ALPHABET.charCodeAt((v >> 18) & 63);
    out[o++] = <u16>ALPHABET.charCodeAt((v >> 12) & 63);
    out[o++] = i + 1 < n ? <u16>ALPHABET.charCodeAt((v >> 6) & 63) : 0x3d;
    out[o++] = i + 2 < n ? <u16>ALPHABET.charCodeAt(v & 63) : 0x3d;
  }
  return String.UTF16.decodeUnsafe(out.dataStart, <usize>o << 1);
}

function sextet(c: u32): i32 {
  if (c >= 0x41 && c <= 0x5a) return <i32>(c - 0x41);
  if (c >= 0x61 && c <= 0x7a) return <i32>(c - 0x61 + 26);
  if (c >= 0x30 && c <= 0x39) return <i32>(c - 0x30 + 52);
  if (c == 0x2b) return 62;
  if (c == 0x2f) return 63;
  return -1;
}

/**
 * base64Decode decodes s; ASCII whitespace is skipped and padding is
 * optional. It returns null for any other character or a bad length.
 */
export function base64Decode(s: string): Uint8Array | null {
  const vals = new Uint8Array(s.length);
  let n = 0;
  let pad = 0;
  for (let i = 0; i < s.length; i++) {
    const c = <u32>s.charCodeAt(i);
    if (c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09) continue;
    if (c == 0x3d) {
      pad++;
      continue;
    }
    if (pad > 0) return null; // data after padding
    const v = sextet(c);
    if (v < 0) return null;
    vals[n++] = <u8>v;
  }
  if (n % 4 == 1 || pad > 2 || (pad > 0 && (n + pad) % 4 != 0)) return null;
  const out = new Uint8Array((n * 3) / 4);
  let o = 0;
  for (let i = 0; i < n; i += 4) {
    const rem = min(4, n - i);
    let v: u32 = 0;
    for (let k = 0; k < 4; k++) v = (v << 6) | (k < rem ? <u32>vals[i + k] : 0);
    out[o++] = <u8>(v >> 16);
    if (rem > 2) out[o++] = <u8>(v >> 8);
    if (rem > 3) out[o++] = <u8>v;
  }
  return out;
}
