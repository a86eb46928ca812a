/*
 * workbench.c: the C plugin development kit for Workbench (see workbench.h).
 *
 * Layout: arena, UTF-8, JSON reader, JSON writer, input check, manifest,
 * host imports and the per-call API, exports.
 */
#include "workbench.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ========================================================================
 * Arena
 * ======================================================================== */

/* arena_chunk is one malloc'd block; data follows the header. */
typedef struct arena_chunk {
	struct arena_chunk *prev;
	size_t cap, used;
	max_align_t data[];
} arena_chunk;

struct wb_arena {
	arena_chunk *head;
	size_t total, limit;
	void *last;      /* the latest allocation, which can grow in place */
	size_t last_len; /* its size */
};

#define ARENA_CHUNK_BYTES ((size_t)64 << 10)

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

wb_arena *wb_arena_new(size_t limit) {
	wb_arena *a = calloc(1, sizeof *a);
	if (a) {
		a->limit = limit ? limit : WB_ARENA_DEFAULT_LIMIT;
	}
	return a;
}

void wb_arena_free(wb_arena *a) {
	if (!a) {
		return;
	}
	arena_chunk *c = a->head;
	while (c) {
		arena_chunk *prev = c->prev;
		free(c);
		c = prev;
	}
	free(a);
}

void *wb_arena_alloc(wb_arena *a, size_t n) {
	if (!a || n > a->limit) {
		return NULL;
	}
	size_t need = align8(n ? n : 1);
	if (need > a->limit - a->total) {
		return NULL;
	}
	arena_chunk *c = a->head;
	if (!c || c->cap - c->used < need) {
		size_t cap = need > ARENA_CHUNK_BYTES ? need : ARENA_CHUNK_BYTES;
		arena_chunk *fresh = malloc(sizeof *fresh + cap);
		if (!fresh) {
			return NULL;
		}
		fresh->cap = cap;
		fresh->used = 0;
		if (c && cap > ARENA_CHUNK_BYTES) {
			/* A big allocation gets its own chunk behind the current one,
			 * so the current chunk's free space stays usable. */
			fresh->prev = c->prev;
			c->prev = fresh;
			fresh->used = need;
			a->total += need;
			a->last = NULL;
			return fresh->data;
		}
		fresh->prev = c;
		a->head = c = fresh;
	}
	void *p = (char *)c->data + c->used;
	c->used += need;
	a->total += need;
	a->last = p;
	a->last_len = need;
	return p;
}

void *wb_arena_grow(wb_arena *a, void *p, size_t old_n, size_t new_n) {
	if (!a) {
		return NULL;
	}
	if (!p) {
		return wb_arena_alloc(a, new_n);
	}
	if (new_n <= old_n) {
		return p;
	}
	arena_chunk *c = a->head;
	if (p == a->last && c && (char *)p >= (char *)c->data && (char *)p < (char *)c->data + c->cap) {
		size_t start = (size_t)((char *)p - (char *)c->data);
		size_t need = align8(new_n);
		if (need <= c->cap - start && need - a->last_len <= a->limit - a->total) {
			a->total += need - a->last_len;
			c->used = start + need;
			a->last_len = need;
			return p;
		}
	}
	void *q = wb_arena_alloc(a, new_n);
	if (q) {
		memcpy(q, p, old_n);
	}
	return q;
}

char *wb_arena_strndup(wb_arena *a, const char *s, size_t n) {
	if (n == SIZE_MAX) {
		return NULL;
	}
	char *d = wb_arena_alloc(a, n + 1);
	if (d) {
		if (n) {
			memcpy(d, s, n);
		}
		d[n] = 0;
	}
	return d;
}

char *wb_arena_strdup(wb_arena *a, const char *s) {
	return s ? wb_arena_strndup(a, s, strlen(s)) : NULL;
}

char *wb_arena_vprintf(wb_arena *a, const char *fmt, va_list ap) {
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	char *d = NULL;
	if (n >= 0) {
		d = wb_arena_alloc(a, (size_t)n + 1);
		if (d) {
			vsnprintf(d, (size_t)n + 1, fmt, again);
		}
	}
	va_end(again);
	return d;
}

char *wb_arena_printf(wb_arena *a, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	char *d = wb_arena_vprintf(a, fmt, ap);
	va_end(ap);
	return d;
}

/* ========================================================================
 * UTF-8
 * ======================================================================== */

/* utf8_valid_len returns the length of the valid UTF-8 sequence at s (at
 * most n bytes available), or 0 when the bytes there are not one. */
static size_t utf8_valid_len(const unsigned char *s, size_t n) {
	unsigned char c = s[0];
	if (c < 0x80) {
		return 1;
	}
	size_t len;
	unsigned char lo = 0x80, hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0) {
			lo = 0xA0; /* no overlong forms */
		} else if (c == 0xED) {
			hi = 0x9F; /* no surrogates */
		}
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0) {
			lo = 0x90;
		} else if (c == 0xF4) {
			hi = 0x8F; /* nothing above U+10FFFF */
		}
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi) {
		return 0;
	}
	for (size_t i = 2; i < len; i++) {
		if (s[i] < 0x80 || s[i] > 0xBF) {
			return 0;
		}
	}
	return len;
}

/* utf8_encode writes code point cp (valid scalar value) to out, which has
 * room for 4 bytes, and returns the length. */
static size_t utf8_encode(uint32_t cp, char *out) {
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

#define REPLACEMENT_CHAR 0xFFFD

/* utf8_count counts code points, counting each invalid byte as one. */
static size_t utf8_count(const char *s, size_t n) {
	size_t count = 0;
	for (size_t i = 0; i < n; count++) {
		size_t l = utf8_valid_len((const unsigned char *)s + i, n - i);
		i += l ? l : 1;
	}
	return count;
}

/* ========================================================================
 * JSON reader
 * ======================================================================== */

typedef struct {
	wb_arena *a;
	const char *s;
	size_t n, pos;
	const char *err;
	size_t err_at;
} json_parser;

static bool parse_fail(json_parser *p, const char *msg) {
	if (!p->err) {
		p->err = msg;
		p->err_at = p->pos;
	}
	return false;
}

static void skip_ws(json_parser *p) {
	while (p->pos < p->n) {
		char c = p->s[p->pos];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return;
		}
		p->pos++;
	}
}

static int hex_digit(char c) {
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

/* read_hex4 reads four hex digits at s[i..]; -1 when they are not. */
static long read_hex4(const char *s, size_t n, size_t i) {
	if (n - i < 4) {
		return -1;
	}
	long v = 0;
	for (size_t k = 0; k < 4; k++) {
		int d = hex_digit(s[i + k]);
		if (d < 0) {
			return -1;
		}
		v = v * 16 + d;
	}
	return v;
}

/* decode_string decodes the string body starting after the opening quote
 * at p->pos. With out NULL it only validates and measures: *out_len gets the
 * decoded length and *end the index of the closing quote. With out set it
 * writes the decoded bytes (the measured length must fit). */
static bool decode_string(json_parser *p, char *out, size_t *out_len, size_t *end) {
	const char *s = p->s;
	size_t n = p->n, i = p->pos, len = 0;
	char tmp[4];
	while (i < n) {
		/* Copy a run of plain ASCII at once: most strings are nothing else. */
		size_t run = i;
		while (run < n) {
			unsigned char r = (unsigned char)s[run];
			if (r < 0x20 || r >= 0x80 || r == '"' || r == '\\') {
				break;
			}
			run++;
		}
		if (run > i) {
			if (out) {
				memcpy(out + len, s + i, run - i);
			}
			len += run - i;
			i = run;
			continue;
		}
		unsigned char c = (unsigned char)s[i];
		if (c == '"') {
			*out_len = len;
			*end = i;
			return true;
		}
		if (c < 0x20) {
			p->pos = i;
			return parse_fail(p, "control character in string");
		}
		if (c == '\\') {
			if (i + 1 >= n) {
				break;
			}
			char e = s[i + 1];
			char single = 0;
			switch (e) {
			case '"': single = '"'; break;
			case '\\': single = '\\'; break;
			case '/': single = '/'; break;
			case 'b': single = '\b'; break;
			case 'f': single = '\f'; break;
			case 'n': single = '\n'; break;
			case 'r': single = '\r'; break;
			case 't': single = '\t'; break;
			case 'u': break;
			default:
				p->pos = i;
				return parse_fail(p, "invalid escape in string");
			}
			if (e != 'u') {
				if (out) {
					out[len] = single;
				}
				len++;
				i += 2;
				continue;
			}
			long cp = read_hex4(s, n, i + 2);
			if (cp < 0) {
				p->pos = i;
				return parse_fail(p, "invalid \\u escape in string");
			}
			i += 6;
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				long low = -1;
				if (n - i >= 6 && s[i] == '\\' && s[i + 1] == 'u') {
					low = read_hex4(s, n, i + 2);
				}
				if (low >= 0xDC00 && low <= 0xDFFF) {
					cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
					i += 6;
				} else {
					cp = REPLACEMENT_CHAR; /* lone high surrogate */
				}
			} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
				cp = REPLACEMENT_CHAR; /* lone low surrogate */
			}
			size_t l = utf8_encode((uint32_t)cp, tmp);
			if (out) {
				memcpy(out + len, tmp, l);
			}
			len += l;
			continue;
		}
		size_t l = utf8_valid_len((const unsigned char *)s + i, n - i);
		if (l == 0) {
			size_t r = utf8_encode(REPLACEMENT_CHAR, tmp);
			if (out) {
				memcpy(out + len, tmp, r);
			}
			len += r;
			i++;
			continue;
		}
		if (out) {
			memcpy(out + len, s + i, l);
		}
		len += l;
		i += l;
	}
	p->pos = n;
	return parse_fail(p, "unterminated string");
}

/* parse_string parses a string at p->pos (which holds the quote). */
static bool parse_string(json_parser *p, const char **str, size_t *len) {
	p->pos++; /* opening quote */
	size_t decoded, end;
	if (!decode_string(p, NULL, &decoded, &end)) {
		return false;
	}
	char *buf = wb_arena_alloc(p->a, decoded + 1);
	if (!buf) {
		return parse_fail(p, "out of memory");
	}
	decode_string(p, buf, &decoded, &end);
	buf[decoded] = 0;
	*str = buf;
	*len = decoded;
	p->pos = end + 1;
	return true;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool parse_number(json_parser *p, wb_json *v) {
	const char *s = p->s;
	size_t n = p->n, start = p->pos, i = p->pos;
	if (i < n && s[i] == '-') {
		i++;
	}
	if (i < n && s[i] == '0') {
		i++;
	} else if (i < n && s[i] >= '1' && s[i] <= '9') {
		while (i < n && is_digit(s[i])) {
			i++;
		}
	} else {
		p->pos = i;
		return parse_fail(p, "invalid number");
	}
	if (i < n && s[i] == '.') {
		i++;
		if (i >= n || !is_digit(s[i])) {
			p->pos = i;
			return parse_fail(p, "invalid number: digits must follow '.'");
		}
		while (i < n && is_digit(s[i])) {
			i++;
		}
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-')) {
			i++;
		}
		if (i >= n || !is_digit(s[i])) {
			p->pos = i;
			return parse_fail(p, "invalid number: digits must follow the exponent");
		}
		while (i < n && is_digit(s[i])) {
			i++;
		}
	}
	char *text = wb_arena_strndup(p->a, s + start, i - start);
	if (!text) {
		return parse_fail(p, "out of memory");
	}
	v->type = WB_JSON_NUMBER;
	v->str = text;
	v->len = i - start;
	v->number = strtod(text, NULL);
	p->pos = i;
	return true;
}

static bool parse_literal(json_parser *p, const char *word) {
	size_t l = strlen(word);
	if (p->n - p->pos < l || memcmp(p->s + p->pos, word, l) != 0) {
		return parse_fail(p, "unexpected character");
	}
	p->pos += l;
	return true;
}

static bool parse_value(json_parser *p, wb_json *v, int depth);

/* parse_container parses an array or object whose opening bracket is at
 * p->pos. */
static bool parse_container(json_parser *p, wb_json *v, int depth, bool object) {
	if (depth >= WB_JSON_MAX_DEPTH) {
		return parse_fail(p, "nesting is deeper than the limit of 64");
	}
	char close = object ? '}' : ']';
	v->type = object ? WB_JSON_OBJECT : WB_JSON_ARRAY;
	p->pos++;
	skip_ws(p);
	if (p->pos < p->n && p->s[p->pos] == close) {
		p->pos++;
		return true;
	}
	wb_json *tail = NULL;
	for (;;) {
		wb_json *elem = wb_arena_alloc(p->a, sizeof *elem);
		if (!elem) {
			return parse_fail(p, "out of memory");
		}
		memset(elem, 0, sizeof *elem);
		skip_ws(p);
		if (p->pos >= p->n) {
			return parse_fail(p, "unexpected end of input");
		}
		if (object) {
			if (p->pos >= p->n || p->s[p->pos] != '"') {
				return parse_fail(p, "expected a string key");
			}
			if (!parse_string(p, &elem->key, &elem->key_len)) {
				return false;
			}
			skip_ws(p);
			if (p->pos >= p->n || p->s[p->pos] != ':') {
				return parse_fail(p, "expected ':' after the key");
			}
			p->pos++;
		}
		if (!parse_value(p, elem, depth + 1)) {
			return false;
		}
		if (tail) {
			tail->next = elem;
		} else {
			v->first = elem;
		}
		tail = elem;
		v->len++;
		skip_ws(p);
		if (p->pos < p->n && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->n && p->s[p->pos] == close) {
			p->pos++;
			return true;
		}
		return parse_fail(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static bool parse_value(json_parser *p, wb_json *v, int depth) {
	skip_ws(p);
	if (p->pos >= p->n) {
		return parse_fail(p, "unexpected end of input");
	}
	char c = p->s[p->pos];
	switch (c) {
	case '{':
		return parse_container(p, v, depth, true);
	case '[':
		return parse_container(p, v, depth, false);
	case '"':
		v->type = WB_JSON_STRING;
		return parse_string(p, &v->str, &v->len);
	case 't':
		v->type = WB_JSON_BOOL;
		v->boolean = true;
		return parse_literal(p, "true");
	case 'f':
		v->type = WB_JSON_BOOL;
		return parse_literal(p, "false");
	case 'n':
		v->type = WB_JSON_NULL;
		return parse_literal(p, "null");
	default:
		if (c == '-' || is_digit(c)) {
			return parse_number(p, v);
		}
		return parse_fail(p, "unexpected character");
	}
}

const wb_json *wb_json_parse(wb_arena *a, const char *text, size_t len, wb_json_error *err) {
	json_parser p = {.a = a, .s = text, .n = text ? len : 0};
	wb_json *root = wb_arena_alloc(a, sizeof *root);
	if (!root) {
		if (err) {
			err->offset = 0;
			err->message = "out of memory";
		}
		return NULL;
	}
	memset(root, 0, sizeof *root);
	if (parse_value(&p, root, 0)) {
		skip_ws(&p);
		if (p.pos == p.n) {
			return root;
		}
		parse_fail(&p, "unexpected data after the value");
	}
	if (err) {
		err->offset = p.err_at;
		err->message = p.err;
	}
	return NULL;
}

const wb_json *wb_json_get(const wb_json *obj, const char *key) {
	if (!obj || obj->type != WB_JSON_OBJECT || !key) {
		return NULL;
	}
	size_t kl = strlen(key);
	const wb_json *found = NULL;
	for (const wb_json *m = obj->first; m; m = m->next) {
		if (m->key_len == kl && memcmp(m->key, key, kl) == 0) {
			found = m;
		}
	}
	return found;
}

const wb_json *wb_json_path(const wb_json *v, const char *dotted) {
	char key[256];
	const char *s = dotted;
	while (v && s && *s) {
		const char *dot = strchr(s, '.');
		size_t l = dot ? (size_t)(dot - s) : strlen(s);
		if (l >= sizeof key) {
			return NULL;
		}
		memcpy(key, s, l);
		key[l] = 0;
		v = wb_json_get(v, key);
		s = dot ? dot + 1 : NULL;
	}
	return v;
}

const wb_json *wb_json_at(const wb_json *v, size_t i) {
	if (!v || (v->type != WB_JSON_ARRAY && v->type != WB_JSON_OBJECT)) {
		return NULL;
	}
	const wb_json *e = v->first;
	while (e && i--) {
		e = e->next;
	}
	return e;
}

const char *wb_json_string(const wb_json *v) {
	return v && v->type == WB_JSON_STRING ? v->str : NULL;
}

bool wb_json_number(const wb_json *v, double *out) {
	if (!v || v->type != WB_JSON_NUMBER) {
		return false;
	}
	if (out) {
		*out = v->number;
	}
	return true;
}

bool wb_json_int(const wb_json *v, int64_t *out) {
	if (!v || v->type != WB_JSON_NUMBER) {
		return false;
	}
	int64_t r;
	if (strpbrk(v->str, ".eE") == NULL) {
		errno = 0;
		char *end = NULL;
		long long ll = strtoll(v->str, &end, 10);
		if (errno == ERANGE || !end || *end) {
			return false;
		}
		r = (int64_t)ll;
	} else {
		double d = v->number;
		/* Fractions and exponents count when the value is an exact integer
		 * that doubles represent without rounding. */
		if (!(d == floor(d)) || fabs(d) > 9007199254740992.0) {
			return false;
		}
		r = (int64_t)d;
	}
	if (out) {
		*out = r;
	}
	return true;
}

bool wb_json_bool(const wb_json *v, bool *out) {
	if (!v || v->type != WB_JSON_BOOL) {
		return false;
	}
	if (out) {
		*out = v->boolean;
	}
	return true;
}

bool wb_json_is_null(const wb_json *v) { return v && v->type == WB_JSON_NULL; }

const char *wb_json_type_name(wb_json_type t) {
	switch (t) {
	case WB_JSON_NULL: return "null";
	case WB_JSON_BOOL: return "boolean";
	case WB_JSON_NUMBER: return "number";
	case WB_JSON_STRING: return "string";
	case WB_JSON_ARRAY: return "array";
	case WB_JSON_OBJECT: return "object";
	}
	return "unknown";
}

/* ========================================================================
 * JSON writer
 * ======================================================================== */

#define JW_DEFAULT_LIMIT ((size_t)16 << 20)

void wb_jw_init(wb_jw *w, wb_arena *a, size_t limit) {
	memset(w, 0, sizeof *w);
	w->arena = a;
	w->limit = limit ? limit : JW_DEFAULT_LIMIT;
}

static void jw_fail(wb_jw *w, const char *reason) {
	if (!w->failed) {
		w->failed = true;
		w->fail_reason = reason;
	}
}

static bool jw_reserve(wb_jw *w, size_t extra) {
	if (w->failed) {
		return false;
	}
	if (extra > w->limit || w->len > w->limit - extra) {
		jw_fail(w, "output exceeds the writer's limit");
		return false;
	}
	size_t need = w->len + extra + 1; /* room for the final NUL */
	if (need <= w->cap) {
		return true;
	}
	size_t cap = w->cap ? w->cap : 256;
	while (cap < need) {
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	}
	if (cap > w->limit + 1) {
		cap = w->limit + 1;
	}
	char *b = wb_arena_grow(w->arena, w->buf, w->cap, cap);
	if (!b) {
		jw_fail(w, "out of memory");
		return false;
	}
	w->buf = b;
	w->cap = cap;
	return true;
}

static void jw_put(wb_jw *w, const char *s, size_t n) {
	if (jw_reserve(w, n)) {
		memcpy(w->buf + w->len, s, n);
		w->len += n;
	}
}

static void jw_putc(wb_jw *w, char c) { jw_put(w, &c, 1); }

/* jw_before_value places a comma when needed and checks that a value may
 * come here. */
static bool jw_before_value(wb_jw *w) {
	if (w->failed) {
		return false;
	}
	if (w->depth == 0) {
		if (w->done) {
			jw_fail(w, "a second top-level value");
			return false;
		}
		return true;
	}
	int d = w->depth - 1;
	if (w->is_object[d]) {
		if (!w->after_key) {
			jw_fail(w, "a value inside an object without a key");
			return false;
		}
		w->after_key = false;
		return true;
	}
	if (w->has_member[d]) {
		jw_putc(w, ',');
	}
	w->has_member[d] = 1;
	return !w->failed;
}

static void jw_after_value(wb_jw *w) {
	if (w->depth == 0) {
		w->done = true;
	}
}

/* jw_escaped writes s as a quoted JSON string. */
static void jw_escaped(wb_jw *w, const char *s, size_t n) {
	static const char hex[] = "0123456789abcdef";
	jw_putc(w, '"');
	size_t run = 0; /* start of bytes copied unchanged */
	size_t i = 0;
	while (i < n && !w->failed) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0x80) {
			size_t l = utf8_valid_len((const unsigned char *)s + i, n - i);
			if (l) {
				i += l;
				continue;
			}
		}
		jw_put(w, s + run, i - run);
		char esc[6] = {'\\', 0, 0, 0, 0, 0};
		size_t el = 2;
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			if (c < 0x20) {
				esc[1] = 'u';
				esc[2] = '0';
				esc[3] = '0';
				esc[4] = hex[c >> 4];
				esc[5] = hex[c & 0xF];
				el = 6;
			} else {
				/* An invalid UTF-8 byte becomes U+FFFD. */
				memcpy(esc, "\xEF\xBF\xBD", 3);
				el = 3;
			}
		}
		jw_put(w, esc, el);
		i++;
		run = i;
	}
	jw_put(w, s + run, i - run);
	jw_putc(w, '"');
}

void wb_jw_object(wb_jw *w) {
	if (!jw_before_value(w)) {
		return;
	}
	if (w->depth >= WB_JSON_MAX_DEPTH) {
		jw_fail(w, "nesting is deeper than the limit of 64");
		return;
	}
	jw_putc(w, '{');
	w->is_object[w->depth] = 1;
	w->has_member[w->depth] = 0;
	w->depth++;
}

void wb_jw_array(wb_jw *w) {
	if (!jw_before_value(w)) {
		return;
	}
	if (w->depth >= WB_JSON_MAX_DEPTH) {
		jw_fail(w, "nesting is deeper than the limit of 64");
		return;
	}
	jw_putc(w, '[');
	w->is_object[w->depth] = 0;
	w->has_member[w->depth] = 0;
	w->depth++;
}

static void jw_end(wb_jw *w, bool object) {
	if (w->failed) {
		return;
	}
	if (w->depth == 0 || w->is_object[w->depth - 1] != (object ? 1 : 0)) {
		jw_fail(w, object ? "object end without a matching object" : "array end without a matching array");
		return;
	}
	if (w->after_key) {
		jw_fail(w, "object end right after a key");
		return;
	}
	jw_putc(w, object ? '}' : ']');
	w->depth--;
	jw_after_value(w);
}

void wb_jw_object_end(wb_jw *w) { jw_end(w, true); }
void wb_jw_array_end(wb_jw *w) { jw_end(w, false); }

void wb_jw_keyn(wb_jw *w, const char *key, size_t n) {
	if (w->failed) {
		return;
	}
	if (w->depth == 0 || !w->is_object[w->depth - 1]) {
		jw_fail(w, "a key outside an object");
		return;
	}
	if (w->after_key) {
		jw_fail(w, "two keys in a row");
		return;
	}
	if (!key) {
		jw_fail(w, "a NULL key");
		return;
	}
	if (w->has_member[w->depth - 1]) {
		jw_putc(w, ',');
	}
	w->has_member[w->depth - 1] = 1;
	jw_escaped(w, key, n);
	jw_putc(w, ':');
	w->after_key = true;
}

void wb_jw_key(wb_jw *w, const char *key) { wb_jw_keyn(w, key, key ? strlen(key) : 0); }

void wb_jw_stringn(wb_jw *w, const char *s, size_t n) {
	if (!s) {
		wb_jw_null(w);
		return;
	}
	if (!jw_before_value(w)) {
		return;
	}
	jw_escaped(w, s, n);
	jw_after_value(w);
}

void wb_jw_string(wb_jw *w, const char *s) { wb_jw_stringn(w, s, s ? strlen(s) : 0); }

static void jw_scalar(wb_jw *w, const char *text, size_t n) {
	if (!jw_before_value(w)) {
		return;
	}
	jw_put(w, text, n);
	jw_after_value(w);
}

void wb_jw_int(wb_jw *w, int64_t v) {
	char b[24];
	int n = snprintf(b, sizeof b, "%lld", (long long)v);
	jw_scalar(w, b, (size_t)n);
}

void wb_jw_double(wb_jw *w, double v) {
	if (isnan(v) || isinf(v)) {
		wb_jw_null(w);
		return;
	}
	char b[32];
	int n = 0;
	for (int prec = 15; prec <= 17; prec++) {
		n = snprintf(b, sizeof b, "%.*g", prec, v);
		if (strtod(b, NULL) == v) {
			break;
		}
	}
	jw_scalar(w, b, (size_t)n);
}

void wb_jw_bool(wb_jw *w, bool v) { jw_scalar(w, v ? "true" : "false", v ? 4 : 5); }

void wb_jw_null(wb_jw *w) { jw_scalar(w, "null", 4); }

void wb_jw_value(wb_jw *w, const wb_json *v) {
	if (w->failed) {
		return;
	}
	if (!v) {
		wb_jw_null(w);
		return;
	}
	switch (v->type) {
	case WB_JSON_NULL:
		wb_jw_null(w);
		return;
	case WB_JSON_BOOL:
		wb_jw_bool(w, v->boolean);
		return;
	case WB_JSON_NUMBER:
		jw_scalar(w, v->str, v->len);
		return;
	case WB_JSON_STRING:
		wb_jw_stringn(w, v->str, v->len);
		return;
	case WB_JSON_ARRAY:
		wb_jw_array(w);
		for (const wb_json *e = v->first; e && !w->failed; e = e->next) {
			wb_jw_value(w, e);
		}
		wb_jw_array_end(w);
		return;
	case WB_JSON_OBJECT:
		wb_jw_object(w);
		for (const wb_json *e = v->first; e && !w->failed; e = e->next) {
			wb_jw_keyn(w, e->key, e->key_len);
			wb_jw_value(w, e);
		}
		wb_jw_object_end(w);
		return;
	}
}

void wb_jw_raw(wb_jw *w, const char *json, size_t n) {
	if (w->failed) {
		return;
	}
	wb_arena *scratch = wb_arena_new(0);
	const wb_json *v = scratch ? wb_json_parse(scratch, json, n, NULL) : NULL;
	if (!v) {
		jw_fail(w, scratch ? "raw text is not one valid JSON value" : "out of memory");
	} else {
		wb_jw_value(w, v);
	}
	wb_arena_free(scratch);
}

void wb_jw_kv_string(wb_jw *w, const char *key, const char *s) {
	wb_jw_key(w, key);
	wb_jw_string(w, s);
}

void wb_jw_kv_int(wb_jw *w, const char *key, int64_t v) {
	wb_jw_key(w, key);
	wb_jw_int(w, v);
}

void wb_jw_kv_double(wb_jw *w, const char *key, double v) {
	wb_jw_key(w, key);
	wb_jw_double(w, v);
}

void wb_jw_kv_bool(wb_jw *w, const char *key, bool v) {
	wb_jw_key(w, key);
	wb_jw_bool(w, v);
}

void wb_jw_kv_value(wb_jw *w, const char *key, const wb_json *v) {
	wb_jw_key(w, key);
	wb_jw_value(w, v);
}

const char *wb_jw_finish(wb_jw *w, size_t *len) {
	if (!w->failed && (w->depth != 0 || !w->done)) {
		jw_fail(w, "the value is incomplete");
	}
	if (w->failed || !jw_reserve(w, 0)) {
		return NULL;
	}
	w->buf[w->len] = 0;
	if (len) {
		*len = w->len;
	}
	return w->buf;
}

/* ========================================================================
 * Input check (a subset of JSON Schema)
 * ======================================================================== */

/* schema_path is the location of the value being checked, for messages. */
typedef struct {
	wb_arena *a;
	const char *path; /* "" at the top */
} schema_ctx;

static const char *at_path(schema_ctx *c, const char *msg) {
	if (!msg) {
		return "out of memory";
	}
	if (!c->path[0]) {
		return wb_arena_printf(c->a, "input: %s", msg);
	}
	return wb_arena_printf(c->a, "%s: %s", c->path, msg);
}

static bool matches_type(const wb_json *v, const char *t) {
	if (strcmp(t, "integer") == 0) {
		return wb_json_int(v, NULL);
	}
	return strcmp(t, wb_json_type_name(v->type)) == 0;
}

static bool json_equal(const wb_json *x, const wb_json *y, int depth) {
	if (x->type != y->type || depth > WB_JSON_MAX_DEPTH) {
		return false;
	}
	switch (x->type) {
	case WB_JSON_NULL: return true;
	case WB_JSON_BOOL: return x->boolean == y->boolean;
	case WB_JSON_NUMBER: return x->number == y->number;
	case WB_JSON_STRING: return x->len == y->len && memcmp(x->str, y->str, x->len) == 0;
	case WB_JSON_ARRAY: {
		if (x->len != y->len) {
			return false;
		}
		for (const wb_json *a = x->first, *b = y->first; a && b; a = a->next, b = b->next) {
			if (!json_equal(a, b, depth + 1)) {
				return false;
			}
		}
		return true;
	}
	case WB_JSON_OBJECT: {
		if (x->len != y->len) {
			return false;
		}
		for (const wb_json *a = x->first; a; a = a->next) {
			const wb_json *b = NULL;
			for (const wb_json *m = y->first; m; m = m->next) {
				if (m->key_len == a->key_len && memcmp(m->key, a->key, a->key_len) == 0) {
					b = m;
				}
			}
			if (!b || !json_equal(a, b, depth + 1)) {
				return false;
			}
		}
		return true;
	}
	}
	return false;
}

static const char *check_value(schema_ctx *c, const wb_json *schema, const wb_json *v);

static const char *number_keyword(schema_ctx *c, const wb_json *schema, const wb_json *v) {
	double x = v->number, bound;
	if (wb_json_number(wb_json_get(schema, "minimum"), &bound) && x < bound) {
		return at_path(c, wb_arena_printf(c->a, "must be at least %s", wb_json_get(schema, "minimum")->str));
	}
	if (wb_json_number(wb_json_get(schema, "maximum"), &bound) && x > bound) {
		return at_path(c, wb_arena_printf(c->a, "must be at most %s", wb_json_get(schema, "maximum")->str));
	}
	if (wb_json_number(wb_json_get(schema, "exclusiveMinimum"), &bound) && x <= bound) {
		return at_path(c, wb_arena_printf(c->a, "must be greater than %s", wb_json_get(schema, "exclusiveMinimum")->str));
	}
	if (wb_json_number(wb_json_get(schema, "exclusiveMaximum"), &bound) && x >= bound) {
		return at_path(c, wb_arena_printf(c->a, "must be less than %s", wb_json_get(schema, "exclusiveMaximum")->str));
	}
	return NULL;
}

static const char *string_keyword(schema_ctx *c, const wb_json *schema, const wb_json *v) {
	int64_t bound;
	size_t count = utf8_count(v->str, v->len);
	if (wb_json_int(wb_json_get(schema, "minLength"), &bound) && (int64_t)count < bound) {
		return at_path(c, wb_arena_printf(c->a, "must be at least %lld characters long", (long long)bound));
	}
	if (wb_json_int(wb_json_get(schema, "maxLength"), &bound) && (int64_t)count > bound) {
		return at_path(c, wb_arena_printf(c->a, "must be at most %lld characters long", (long long)bound));
	}
	return NULL;
}

static const char *child_path(schema_ctx *c, const char *key, size_t key_len, long index) {
	if (key) {
		return c->path[0] ? wb_arena_printf(c->a, "%s.%.*s", c->path, (int)key_len, key)
		                  : wb_arena_printf(c->a, "%.*s", (int)key_len, key);
	}
	return wb_arena_printf(c->a, "%s[%ld]", c->path, index);
}

static const char *array_keyword(schema_ctx *c, const wb_json *schema, const wb_json *v) {
	int64_t bound;
	if (wb_json_int(wb_json_get(schema, "minItems"), &bound) && (int64_t)v->len < bound) {
		return at_path(c, wb_arena_printf(c->a, "must have at least %lld items", (long long)bound));
	}
	if (wb_json_int(wb_json_get(schema, "maxItems"), &bound) && (int64_t)v->len > bound) {
		return at_path(c, wb_arena_printf(c->a, "must have at most %lld items", (long long)bound));
	}
	const wb_json *items = wb_json_get(schema, "items");
	if (!items || items->type != WB_JSON_OBJECT) {
		return NULL;
	}
	long i = 0;
	for (const wb_json *e = v->first; e; e = e->next, i++) {
		schema_ctx sub = {c->a, child_path(c, NULL, 0, i)};
		if (!sub.path) {
			return "out of memory";
		}
		const char *msg = check_value(&sub, items, e);
		if (msg) {
			return msg;
		}
	}
	return NULL;
}

static const char *object_keyword(schema_ctx *c, const wb_json *schema, const wb_json *v) {
	const wb_json *required = wb_json_get(schema, "required");
	if (required && required->type == WB_JSON_ARRAY) {
		for (const wb_json *r = required->first; r; r = r->next) {
			if (r->type != WB_JSON_STRING) {
				continue;
			}
			const wb_json *m = wb_json_get(v, r->str);
			if (!m) {
				schema_ctx sub = {c->a, child_path(c, r->str, r->len, 0)};
				return sub.path ? at_path(&sub, "is required") : "out of memory";
			}
		}
	}
	const wb_json *props = wb_json_get(schema, "properties");
	const wb_json *additional = wb_json_get(schema, "additionalProperties");
	for (const wb_json *m = v->first; m; m = m->next) {
		schema_ctx sub = {c->a, child_path(c, m->key, m->key_len, 0)};
		if (!sub.path) {
			return "out of memory";
		}
		const wb_json *ps = NULL;
		if (props && props->type == WB_JSON_OBJECT) {
			for (const wb_json *p = props->first; p; p = p->next) {
				if (p->key_len == m->key_len && memcmp(p->key, m->key, m->key_len) == 0) {
					ps = p;
				}
			}
		}
		if (!ps) {
			if (additional && additional->type == WB_JSON_BOOL && !additional->boolean) {
				return at_path(&sub, "is not a known field");
			}
			ps = additional && additional->type == WB_JSON_OBJECT ? additional : NULL;
		}
		if (ps && ps->type == WB_JSON_OBJECT) {
			const char *msg = check_value(&sub, ps, m);
			if (msg) {
				return msg;
			}
		}
	}
	return NULL;
}

static const char *check_value(schema_ctx *c, const wb_json *schema, const wb_json *v) {
	const wb_json *type = wb_json_get(schema, "type");
	if (type && type->type == WB_JSON_STRING && !matches_type(v, type->str)) {
		return at_path(c, wb_arena_printf(c->a, "must be %s %s, not %s",
		                                  strchr("aeiou", type->str[0]) ? "an" : "a", type->str,
		                                  wb_json_type_name(v->type)));
	}
	if (type && type->type == WB_JSON_ARRAY) {
		bool ok = false;
		for (const wb_json *t = type->first; t && !ok; t = t->next) {
			ok = t->type == WB_JSON_STRING && matches_type(v, t->str);
		}
		if (!ok) {
			return at_path(c, wb_arena_printf(c->a, "has the wrong type %s", wb_json_type_name(v->type)));
		}
	}
	const wb_json *en = wb_json_get(schema, "enum");
	if (en && en->type == WB_JSON_ARRAY) {
		bool ok = false;
		for (const wb_json *e = en->first; e && !ok; e = e->next) {
			ok = json_equal(e, v, 0);
		}
		if (!ok) {
			wb_jw list;
			wb_jw_init(&list, c->a, 4096);
			wb_jw_value(&list, en);
			const char *text = wb_jw_finish(&list, NULL);
			return at_path(c, wb_arena_printf(c->a, "must be one of %s", text ? text : "the enum values"));
		}
	}
	const wb_json *cst = wb_json_get(schema, "const");
	if (cst && !json_equal(cst, v, 0)) {
		return at_path(c, "must equal the schema's const value");
	}
	switch (v->type) {
	case WB_JSON_NUMBER: return number_keyword(c, schema, v);
	case WB_JSON_STRING: return string_keyword(c, schema, v);
	case WB_JSON_ARRAY: return array_keyword(c, schema, v);
	case WB_JSON_OBJECT: return object_keyword(c, schema, v);
	default: return NULL;
	}
}

const char *wb_schema_check(wb_arena *a, const wb_json *schema, const wb_json *value) {
	if (!schema || schema->type != WB_JSON_OBJECT || !value) {
		return NULL;
	}
	schema_ctx c = {a, ""};
	return check_value(&c, schema, value);
}

/* ========================================================================
 * Manifest
 * ======================================================================== */

static void kv_opt_string(wb_jw *w, const char *key, const char *s) {
	if (s && *s) {
		wb_jw_kv_string(w, key, s);
	}
}

static void kv_string_list(wb_jw *w, const char *key, const char *const *list) {
	wb_jw_key(w, key);
	wb_jw_array(w);
	for (size_t i = 0; list && list[i]; i++) {
		wb_jw_string(w, list[i]);
	}
	wb_jw_array_end(w);
}

static void kv_limits(wb_jw *w, const char *key, const wb_limits *l, bool plugin_level) {
	if (!l->timeout_ms && !(plugin_level && l->memory_pages) && !l->output_bytes && !l->response_bytes &&
	    !l->concurrency) {
		return;
	}
	wb_jw_key(w, key);
	wb_jw_object(w);
	if (l->timeout_ms) {
		wb_jw_kv_int(w, "timeoutMs", l->timeout_ms);
	}
	if (plugin_level && l->memory_pages) {
		wb_jw_kv_int(w, "memoryPages", l->memory_pages);
	}
	if (l->output_bytes) {
		wb_jw_kv_int(w, "outputBytes", l->output_bytes);
	}
	if (l->response_bytes) {
		wb_jw_kv_int(w, "responseBytes", l->response_bytes);
	}
	if (l->concurrency) {
		wb_jw_kv_int(w, "concurrency", l->concurrency);
	}
	wb_jw_object_end(w);
}

static void write_auth(wb_jw *w, const wb_auth *auth) {
	const char *mode = auth->mode && *auth->mode ? auth->mode : "none";
	wb_jw_key(w, "auth");
	wb_jw_object(w);
	wb_jw_kv_string(w, "mode", mode);
	if (strcmp(mode, "oauth2") == 0) {
		wb_jw_key(w, "oauth2");
		wb_jw_object(w);
		wb_jw_kv_string(w, "authorizeUrl", auth->authorize_url);
		wb_jw_kv_string(w, "tokenUrl", auth->token_url);
		kv_string_list(w, "scopes", auth->scopes);
		kv_opt_string(w, "tokenAuth", auth->token_auth);
		kv_opt_string(w, "refreshUrl", auth->refresh_url);
		wb_jw_object_end(w);
	} else if (strcmp(mode, "apikey") == 0) {
		wb_jw_key(w, "apikey");
		wb_jw_object(w);
		wb_jw_key(w, "fields");
		wb_jw_array(w);
		for (size_t i = 0; i < auth->field_count; i++) {
			const wb_apikey_field *f = &auth->fields[i];
			wb_jw_object(w);
			wb_jw_kv_string(w, "name", f->name);
			kv_opt_string(w, "label", f->label);
			wb_jw_kv_bool(w, "secret", f->secret);
			wb_jw_kv_bool(w, "required", f->required);
			kv_opt_string(w, "pattern", f->pattern);
			kv_opt_string(w, "placeholder", f->placeholder);
			wb_jw_object_end(w);
		}
		wb_jw_array_end(w);
		wb_jw_key(w, "placement");
		wb_jw_object(w);
		wb_jw_kv_string(w, "in", auth->placement_in);
		kv_opt_string(w, "name", auth->placement_name);
		kv_opt_string(w, "value", auth->placement_value);
		kv_opt_string(w, "username", auth->placement_username);
		kv_opt_string(w, "password", auth->placement_password);
		wb_jw_object_end(w);
		wb_jw_object_end(w);
	} else if (strcmp(mode, "cookie") == 0) {
		wb_jw_key(w, "cookie");
		wb_jw_object(w);
		kv_string_list(w, "domains", auth->cookie_domains);
		wb_jw_kv_string(w, "loginUrl", auth->login_url);
		wb_jw_object_end(w);
	}
	wb_jw_object_end(w);
}

/* schema_problem parses a tool schema; NULL when it is an object schema. */
static const char *schema_problem(wb_arena *a, const char *slug, const char *which, const char *text,
                                  const wb_json **out) {
	wb_json_error err = {0};
	const wb_json *s = wb_json_parse(a, text, strlen(text), &err);
	if (!s) {
		return wb_arena_printf(a, "%s: %s is not JSON: %s at offset %zu", slug, which, err.message, err.offset);
	}
	const char *type = wb_json_string(wb_json_get(s, "type"));
	if (s->type != WB_JSON_OBJECT || !type || strcmp(type, "object") != 0) {
		return wb_arena_printf(a, "%s: %s must be an object schema with \"type\": \"object\"", slug, which);
	}
	if (out) {
		*out = s;
	}
	return NULL;
}

static const char *export_of(const wb_tool_def *t) {
	return t->export_name && *t->export_name ? t->export_name : t->slug;
}

/* plugin_problem reports the first inconsistency of a definition that the
 * kit can see before the host does. */
static const char *plugin_problem(wb_arena *a, const wb_plugin_def *p) {
	if (!p) {
		return "wb_plugin returned NULL";
	}
	if (!p->name || !*p->name || !p->version || !*p->version || !p->description || !*p->description) {
		return "name, version and description are required";
	}
	if (p->tool_count == 0 || !p->tools) {
		return "at least one tool is required";
	}
	char prefix[64];
	size_t nl = strlen(p->name);
	if (nl + 2 > sizeof prefix) {
		return "the name is too long";
	}
	for (size_t i = 0; i < nl; i++) {
		prefix[i] = p->name[i] == '-' ? '_' : p->name[i];
	}
	prefix[nl] = '_';
	prefix[nl + 1] = 0;
	for (size_t i = 0; i < p->tool_count; i++) {
		const wb_tool_def *t = &p->tools[i];
		if (!t->slug || strncmp(t->slug, prefix, nl + 1) != 0) {
			return wb_arena_printf(a, "tools[%zu]: slug %s must start with %s", i, t->slug ? t->slug : "(null)", prefix);
		}
		if (!t->description || !*t->description) {
			return wb_arena_printf(a, "%s: a description is required", t->slug);
		}
		if (!t->fn) {
			return wb_arena_printf(a, "%s: no handler function", t->slug);
		}
		if ((t->annotations & WB_READ_ONLY) && (t->annotations & WB_DESTRUCTIVE)) {
			return wb_arena_printf(a, "%s: a tool cannot be both read-only and destructive", t->slug);
		}
		if (!t->input_schema) {
			return wb_arena_printf(a, "%s: an input schema is required", t->slug);
		}
		const char *msg = schema_problem(a, t->slug, "input schema", t->input_schema, NULL);
		if (!msg && t->output_schema) {
			msg = schema_problem(a, t->slug, "output schema", t->output_schema, NULL);
		}
		if (msg) {
			return msg;
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(p->tools[j].slug, t->slug) == 0) {
				return wb_arena_printf(a, "%s is declared twice", t->slug);
			}
			if (strcmp(export_of(&p->tools[j]), export_of(t)) == 0) {
				return wb_arena_printf(a, "%s and %s share the export %s", p->tools[j].slug, t->slug, export_of(t));
			}
		}
	}
	return NULL;
}

const char *wb_manifest_json(wb_arena *a, const wb_plugin_def *p, size_t *len, const char **problem) {
	const char *msg = plugin_problem(a, p);
	if (msg) {
		if (problem) {
			*problem = msg;
		}
		return NULL;
	}
	wb_jw w;
	wb_jw_init(&w, a, 0);
	wb_jw_object(&w);
	wb_jw_kv_int(&w, "abi", WB_ABI_VERSION);
	wb_jw_kv_string(&w, "name", p->name);
	wb_jw_kv_string(&w, "version", p->version);
	kv_opt_string(&w, "title", p->title);
	wb_jw_kv_string(&w, "description", p->description);
	kv_opt_string(&w, "logo", p->logo);
	if (p->categories) {
		kv_string_list(&w, "categories", p->categories);
	}
	kv_opt_string(&w, "baseUrl", p->base_url);
	if (p->hosts) {
		kv_string_list(&w, "hosts", p->hosts);
	}
	if (p->proxy_base_url && *p->proxy_base_url) {
		wb_jw_key(&w, "proxy");
		wb_jw_object(&w);
		wb_jw_kv_string(&w, "baseUrl", p->proxy_base_url);
		wb_jw_object_end(&w);
	}
	write_auth(&w, &p->auth);
	if (p->setting_count) {
		wb_jw_key(&w, "settings");
		wb_jw_array(&w);
		for (size_t i = 0; i < p->setting_count; i++) {
			const wb_setting *s = &p->settings[i];
			wb_jw_object(&w);
			wb_jw_kv_string(&w, "name", s->name);
			kv_opt_string(&w, "description", s->description);
			if (s->enum_values) {
				kv_string_list(&w, "enum", s->enum_values);
			}
			kv_opt_string(&w, "default", s->default_value);
			wb_jw_object_end(&w);
		}
		wb_jw_array_end(&w);
	}
	kv_limits(&w, "limits", &p->limits, true);
	wb_jw_key(&w, "tools");
	wb_jw_array(&w);
	for (size_t i = 0; i < p->tool_count; i++) {
		const wb_tool_def *t = &p->tools[i];
		wb_jw_object(&w);
		wb_jw_kv_string(&w, "slug", t->slug);
		kv_opt_string(&w, "title", t->title);
		wb_jw_kv_string(&w, "description", t->description);
		wb_jw_key(&w, "inputSchema");
		wb_jw_raw(&w, t->input_schema, strlen(t->input_schema));
		if (t->output_schema) {
			wb_jw_key(&w, "outputSchema");
			wb_jw_raw(&w, t->output_schema, strlen(t->output_schema));
		}
		wb_jw_key(&w, "annotations");
		wb_jw_object(&w);
		wb_jw_kv_bool(&w, "readOnly", (t->annotations & WB_READ_ONLY) != 0);
		wb_jw_kv_bool(&w, "destructive", (t->annotations & WB_DESTRUCTIVE) != 0);
		wb_jw_kv_bool(&w, "idempotent", (t->annotations & WB_IDEMPOTENT) != 0);
		wb_jw_kv_bool(&w, "openWorld", (t->annotations & WB_OPEN_WORLD) != 0);
		wb_jw_object_end(&w);
		kv_opt_string(&w, "export", t->export_name);
		kv_limits(&w, "limits", &t->limits, false);
		wb_jw_object_end(&w);
	}
	wb_jw_array_end(&w);
	wb_jw_object_end(&w);
	const char *out = wb_jw_finish(&w, len);
	if (!out && problem) {
		*problem = w.fail_reason;
	}
	return out;
}

/* ========================================================================
 * Host imports (docs/abi.md section 5). Native builds (the unit tests)
 * link their own definitions of these functions.
 * ======================================================================== */

#ifdef __wasm__
#define WB_IMPORT(name) __attribute__((import_module("workbench_v1"), import_name(name)))
#else
#define WB_IMPORT(name)
#endif

WB_IMPORT("output_set") void wb_host_output_set(const void *ptr, uint32_t len);
WB_IMPORT("result_read") int32_t wb_host_result_read(void *ptr, uint32_t len);
WB_IMPORT("log") void wb_host_log(int32_t level, const void *ptr, uint32_t len);
WB_IMPORT("config_get") int32_t wb_host_config_get(const void *key, uint32_t len);
WB_IMPORT("progress") void wb_host_progress(double done, double total, const void *msg, uint32_t len);
WB_IMPORT("http_request")
int64_t wb_host_http_request(const void *req, uint32_t req_len, const void *body, uint32_t body_len);

/* ========================================================================
 * The call
 * ======================================================================== */

struct wb_call {
	wb_arena *arena;
	const wb_tool_def *tool;
	const wb_json *input;
	wb_jw result;
	bool result_started;
	const char *err_code;
	const char *err_message;
	const char *err_details; /* checked JSON text or NULL */
};

wb_arena *wb_call_arena(wb_call *c) { return c->arena; }
const char *wb_call_tool(wb_call *c) { return c->tool ? c->tool->slug : NULL; }
const wb_json *wb_input(wb_call *c) { return c->input; }
const wb_json *wb_arg(wb_call *c, const char *name) { return wb_json_get(c->input, name); }

const char *wb_arg_string(wb_call *c, const char *name, const char *fallback) {
	const char *s = wb_json_string(wb_arg(c, name));
	return s ? s : fallback;
}

int64_t wb_arg_int(wb_call *c, const char *name, int64_t fallback) {
	int64_t v;
	return wb_json_int(wb_arg(c, name), &v) ? v : fallback;
}

double wb_arg_number(wb_call *c, const char *name, double fallback) {
	double v;
	return wb_json_number(wb_arg(c, name), &v) ? v : fallback;
}

bool wb_arg_bool(wb_call *c, const char *name, bool fallback) {
	bool v;
	return wb_json_bool(wb_arg(c, name), &v) ? v : fallback;
}

wb_jw *wb_result(wb_call *c) {
	c->result_started = true;
	return &c->result;
}

static int record_error(wb_call *c, const char *code, const char *details, const char *fmt, va_list ap) {
	c->err_code = wb_arena_strdup(c->arena, code && *code ? code : WB_TOOL_ERROR);
	c->err_message = wb_arena_vprintf(c->arena, fmt, ap);
	c->err_details = NULL;
	if (details) {
		wb_arena *scratch = wb_arena_new(0);
		if (scratch && wb_json_parse(scratch, details, strlen(details), NULL)) {
			c->err_details = wb_arena_strdup(c->arena, details);
		} else {
			wb_log(WB_LOG_WARN, "%s: error details are not valid JSON; dropped", wb_call_tool(c));
		}
		wb_arena_free(scratch);
	}
	return WB_ERR;
}

int wb_fail(wb_call *c, const char *code, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	record_error(c, code, NULL, fmt, ap);
	va_end(ap);
	return WB_ERR;
}

int wb_fail_details(wb_call *c, const char *code, const char *details_json, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	record_error(c, code, details_json, fmt, ap);
	va_end(ap);
	return WB_ERR;
}

const char *wb_error_code(wb_call *c) { return c->err_code; }
const char *wb_error_message(wb_call *c) { return c->err_message; }

void wb_clear_error(wb_call *c) {
	c->err_code = NULL;
	c->err_message = NULL;
	c->err_details = NULL;
}

/* LOG_MAX is the host's cap on one log record. */
#define LOG_MAX 4096

void wb_log(int level, const char *fmt, ...) {
	char buf[LOG_MAX + 1];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0) {
		return;
	}
	size_t len = (size_t)n < LOG_MAX ? (size_t)n : LOG_MAX;
	wb_host_log(level, buf, (uint32_t)len);
}

void wb_progress(double done, double total, const char *message) {
	const char *m = message ? message : "";
	wb_host_progress(done, total, m, (uint32_t)strlen(m));
}

/* read_pending copies the host's pending result of n bytes into the arena,
 * NUL-terminated; NULL when it cannot. */
static char *read_pending(wb_arena *a, uint64_t n) {
	if (n > UINT32_MAX || n >= SIZE_MAX) {
		return NULL;
	}
	char *buf = wb_arena_alloc(a, (size_t)n + 1);
	if (!buf) {
		return NULL;
	}
	if (n > 0) {
		int32_t got = wb_host_result_read(buf, (uint32_t)n);
		if (got < 0 || (uint64_t)(uint32_t)got != n) {
			return NULL;
		}
	}
	buf[n] = 0;
	return buf;
}

const char *wb_config(wb_call *c, const char *key) {
	if (!key) {
		return NULL;
	}
	int32_t n = wb_host_config_get(key, (uint32_t)strlen(key));
	if (n < 0) {
		return NULL;
	}
	return read_pending(c->arena, (uint64_t)n);
}

static bool ascii_equal_fold(const char *x, size_t xl, const char *y) {
	size_t yl = strlen(y);
	if (xl != yl) {
		return false;
	}
	for (size_t i = 0; i < xl; i++) {
		char a = x[i], b = y[i];
		if (a >= 'A' && a <= 'Z') {
			a = (char)(a - 'A' + 'a');
		}
		if (b >= 'A' && b <= 'Z') {
			b = (char)(b - 'A' + 'a');
		}
		if (a != b) {
			return false;
		}
	}
	return true;
}

/* http_request_json encodes the request head; headers of the same name
 * (in any case) are sent as one list. */
static const char *http_request_json(wb_call *c, const wb_http_request *req, size_t *len) {
	wb_jw w;
	wb_jw_init(&w, c->arena, 0);
	wb_jw_object(&w);
	wb_jw_kv_string(&w, "method", req->method && *req->method ? req->method : "GET");
	wb_jw_kv_string(&w, "url", req->url);
	if (req->header_count) {
		wb_jw_key(&w, "headers");
		wb_jw_object(&w);
		for (size_t i = 0; i < req->header_count; i++) {
			const wb_header *h = &req->headers[i];
			bool seen = false;
			for (size_t j = 0; j < i && !seen; j++) {
				seen = ascii_equal_fold(req->headers[j].name, strlen(req->headers[j].name), h->name);
			}
			if (seen) {
				continue;
			}
			wb_jw_key(&w, h->name);
			wb_jw_array(&w);
			for (size_t j = i; j < req->header_count; j++) {
				if (ascii_equal_fold(req->headers[j].name, strlen(req->headers[j].name), h->name)) {
					wb_jw_string(&w, req->headers[j].value ? req->headers[j].value : "");
				}
			}
			wb_jw_array_end(&w);
		}
		wb_jw_object_end(&w);
	}
	if (req->timeout_ms) {
		wb_jw_kv_int(&w, "timeoutMs", req->timeout_ms);
	}
	wb_jw_object_end(&w);
	return wb_jw_finish(&w, len);
}

bool wb_http(wb_call *c, const wb_http_request *req, wb_http_response *resp) {
	memset(resp, 0, sizeof *resp);
	if (!req || !req->url || !*req->url) {
		wb_fail(c, WB_TOOL_ERROR, "HTTP request without a URL");
		return false;
	}
	if (req->body_len > UINT32_MAX || (req->body_len && !req->body)) {
		wb_fail(c, WB_TOOL_ERROR, "HTTP request body is invalid or too large");
		return false;
	}
	size_t head_len = 0;
	const char *head = http_request_json(c, req, &head_len);
	if (!head) {
		wb_fail(c, WB_TOOL_ERROR, "could not encode the HTTP request");
		return false;
	}
	int64_t ret = wb_host_http_request(head, (uint32_t)head_len, req->body, (uint32_t)req->body_len);
	if (ret < 0) {
		uint64_t n = ret == INT64_MIN ? UINT64_MAX : (uint64_t)(-ret);
		const char *text = read_pending(c->arena, n);
		const wb_json *e = text ? wb_json_parse(c->arena, text, (size_t)n, NULL) : NULL;
		const char *code = wb_json_string(wb_json_get(e, "code"));
		const char *message = wb_json_string(wb_json_get(e, "message"));
		if (!code || !*code) {
			wb_fail(c, WB_TOOL_ERROR, "the host reported an unreadable HTTP failure");
		} else {
			wb_fail(c, code, "%s", message ? message : code);
		}
		return false;
	}
	uint64_t rhead = (uint64_t)ret >> 32, rbody = (uint64_t)ret & 0xffffffffu;
	char *all = read_pending(c->arena, rhead + rbody);
	if (!all) {
		wb_fail(c, WB_TOOL_ERROR, "could not read the host's HTTP response of %llu bytes",
		        (unsigned long long)(rhead + rbody));
		return false;
	}
	const wb_json *h = wb_json_parse(c->arena, all, (size_t)rhead, NULL);
	int64_t status;
	if (!h || !wb_json_int(wb_json_get(h, "status"), &status)) {
		wb_fail(c, WB_TOOL_ERROR, "the host returned an unreadable response head");
		return false;
	}
	resp->status = (int)status;
	resp->url = wb_json_string(wb_json_get(h, "url"));
	resp->headers = wb_json_get(h, "headers");
	resp->body = all + rhead; /* read_pending NUL-terminated the whole */
	resp->body_len = (size_t)rbody;
	return true;
}

const char *wb_http_header(const wb_http_response *r, const char *name) {
	if (!r || !r->headers || r->headers->type != WB_JSON_OBJECT || !name) {
		return NULL;
	}
	for (const wb_json *m = r->headers->first; m; m = m->next) {
		if (ascii_equal_fold(m->key, m->key_len, name)) {
			if (m->type == WB_JSON_STRING) {
				return m->str;
			}
			return wb_json_string(wb_json_at(m, 0));
		}
	}
	return NULL;
}

const wb_json *wb_http_json(wb_call *c, const wb_http_response *r) {
	wb_json_error err = {0};
	const wb_json *v = wb_json_parse(c->arena, r->body, r->body_len, &err);
	if (!v) {
		wb_fail(c, WB_UPSTREAM_ERROR, "the response from %s (status %d) is not JSON: %s at offset %zu",
		        r->url ? r->url : "upstream", r->status, err.message, err.offset);
	}
	return v;
}

/* ========================================================================
 * Exports
 * ======================================================================== */

/* MAX_INPUT_BYTES caps one wb_alloc; the host's own input limit is 4 MiB. */
#define MAX_INPUT_BYTES ((uint32_t)64 << 20)

/* pending_input is the buffer of the latest wb_alloc not yet taken by a
 * tool; a buffer the host never passed on is freed by the next wb_alloc. */
static void *pending_input;

WB_EXPORT_AS("wb_alloc") void *wb_alloc(uint32_t size);
void *wb_alloc(uint32_t size) {
	if (size > MAX_INPUT_BYTES) {
		return NULL;
	}
	free(pending_input);
	pending_input = malloc(size ? size : 1);
	return pending_input;
}

/* emit_error hands an error object to the host; a static text is the last
 * resort when even that cannot be encoded. */
static int32_t emit_error(wb_arena *a, const char *code, const char *message, const char *details) {
	wb_jw w;
	wb_jw_init(&w, a, 0);
	wb_jw_object(&w);
	wb_jw_kv_string(&w, "code", code);
	wb_jw_kv_string(&w, "message", message && *message ? message : code);
	if (details) {
		wb_jw_key(&w, "details");
		wb_jw_raw(&w, details, strlen(details));
	}
	wb_jw_object_end(&w);
	size_t len = 0;
	const char *out = a ? wb_jw_finish(&w, &len) : NULL;
	if (!out) {
		static const char fallback[] = "{\"code\":\"TOOL_ERROR\",\"message\":\"out of memory while reporting an error\"}";
		wb_host_output_set(fallback, sizeof fallback - 1);
	} else {
		wb_host_output_set(out, (uint32_t)len);
	}
	return WB_ERR;
}

WB_EXPORT_AS("manifest") int32_t wb_manifest_export(void);
int32_t wb_manifest_export(void) {
	wb_arena *a = wb_arena_new(0);
	const char *problem = "out of memory";
	size_t len = 0;
	const char *out = a ? wb_manifest_json(a, wb_plugin(), &len, &problem) : NULL;
	int32_t status;
	if (out) {
		wb_host_output_set(out, (uint32_t)len);
		status = WB_OK;
	} else {
		status = emit_error(a, WB_INVALID_MANIFEST, problem, NULL);
	}
	wb_arena_free(a);
	return status;
}

static const wb_tool_def *find_tool(const wb_plugin_def *p, const char *export_name) {
	for (size_t i = 0; p && i < p->tool_count; i++) {
		if (strcmp(export_of(&p->tools[i]), export_name) == 0) {
			return &p->tools[i];
		}
	}
	return NULL;
}

/* SCHEMA_CACHE_SLOTS is how many tools' parsed input schemas an instance
 * keeps; tools beyond it parse theirs on every call. */
#define SCHEMA_CACHE_SLOTS 64

/* schema_cache holds parsed input schemas for the instance's lifetime, so a
 * call does not parse its tool's schema again. The schemas are constant
 * text, so nothing of one user's calls is kept. */
static struct {
	wb_arena *arena;
	const wb_tool_def *tool[SCHEMA_CACHE_SLOTS];
	const wb_json *schema[SCHEMA_CACHE_SLOTS];
	size_t n;
} schema_cache;

/* input_schema_of returns t's parsed input schema, or NULL when it does not
 * parse (the manifest export reports that). */
static const wb_json *input_schema_of(const wb_tool_def *t, wb_arena *call_arena) {
	for (size_t i = 0; i < schema_cache.n; i++) {
		if (schema_cache.tool[i] == t) {
			return schema_cache.schema[i];
		}
	}
	if (!schema_cache.arena) {
		schema_cache.arena = wb_arena_new(0);
	}
	wb_arena *a = schema_cache.arena && schema_cache.n < SCHEMA_CACHE_SLOTS ? schema_cache.arena : call_arena;
	const wb_json *s = wb_json_parse(a, t->input_schema, strlen(t->input_schema), NULL);
	if (s && a == schema_cache.arena) {
		schema_cache.tool[schema_cache.n] = t;
		schema_cache.schema[schema_cache.n] = s;
		schema_cache.n++;
	}
	return s;
}

/* run_call decodes and checks the input, runs the handler and reports its
 * outcome. */
static int32_t run_call(wb_call *c, const wb_tool_def *t, uint8_t *input, uint32_t len) {
	static const char empty_object[] = "{}";
	wb_json_error err = {0};
	c->input = len ? wb_json_parse(c->arena, (const char *)input, len, &err)
	               : wb_json_parse(c->arena, empty_object, 2, &err);
	if (input == pending_input) {
		pending_input = NULL;
	}
	free(input);
	if (!c->input) {
		return emit_error(c->arena, WB_INVALID_ARGUMENTS,
		                  wb_arena_printf(c->arena, "input is not valid JSON: %s at offset %zu", err.message, err.offset),
		                  NULL);
	}
	if (c->input->type != WB_JSON_OBJECT) {
		return emit_error(c->arena, WB_INVALID_ARGUMENTS,
		                  wb_arena_printf(c->arena, "input must be an object, not %s", wb_json_type_name(c->input->type)),
		                  NULL);
	}
	const char *problem = wb_schema_check(c->arena, input_schema_of(t, c->arena), c->input);
	if (problem) {
		return emit_error(c->arena, WB_INVALID_ARGUMENTS, problem, NULL);
	}
	int status = t->fn(c);
	if (status == WB_ERR) {
		if (!c->err_code) {
			return emit_error(c->arena, WB_TOOL_ERROR,
			                  wb_arena_printf(c->arena, "%s failed without reporting an error", t->slug), NULL);
		}
		return emit_error(c->arena, c->err_code, c->err_message, c->err_details);
	}
	if (status != WB_OK) {
		return emit_error(c->arena, WB_TOOL_ERROR,
		                  wb_arena_printf(c->arena, "%s returned status %d; handlers return WB_OK or WB_ERR", t->slug, status),
		                  NULL);
	}
	if (!c->result_started) {
		wb_host_output_set(empty_object, 2);
		return WB_OK;
	}
	size_t out_len = 0;
	const char *out = wb_jw_finish(&c->result, &out_len);
	if (!out) {
		return emit_error(c->arena, WB_TOOL_ERROR,
		                  wb_arena_printf(c->arena, "%s produced an unusable result: %s", t->slug, c->result.fail_reason),
		                  NULL);
	}
	wb_host_output_set(out, (uint32_t)out_len);
	return WB_OK;
}

int32_t wb_dispatch(const char *export_name, uint8_t *input, uint32_t len) {
	const wb_tool_def *t = find_tool(wb_plugin(), export_name);
	wb_call c = {0};
	c.arena = wb_arena_new(0);
	if (!c.arena || !t || !t->fn || !t->input_schema) {
		if (input == pending_input) {
			pending_input = NULL;
		}
		free(input);
		int32_t s = emit_error(c.arena, WB_TOOL_ERROR,
		                       c.arena ? wb_arena_printf(c.arena, "no tool is declared for the export %s", export_name) : NULL,
		                       NULL);
		wb_arena_free(c.arena);
		return s;
	}
	c.tool = t;
	wb_jw_init(&c.result, c.arena, 0);
	int32_t status = run_call(&c, t, input, len);
	wb_arena_free(c.arena);
	return status;
}
