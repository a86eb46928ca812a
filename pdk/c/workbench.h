/*
 * workbench.h: the C plugin development kit for Workbench, ABI version 1
 * (docs/abi.md).
 *
 * A plugin is one C file (or a few) compiled with workbench.c for
 * wasm32-wasi as a reactor. It declares its integration and tools in a
 * wb_plugin_def, names it with WB_PLUGIN, and defines one export per tool
 * with WB_EXPORT_TOOL. Everything a tool allocates through its call lives in
 * a per-call arena that is released when the tool returns, so handlers never
 * free anything.
 *
 *     static int echo(wb_call *c) {
 *         wb_jw_value(wb_result(c), wb_input(c));
 *         return WB_OK;
 *     }
 *     static const wb_tool_def tools[] = {{
 *         .slug = "demo_echo", .description = "Returns its input.",
 *         .input_schema = "{\"type\":\"object\"}", .fn = echo,
 *         .annotations = WB_READ_ONLY | WB_IDEMPOTENT,
 *     }};
 *     static const wb_plugin_def plugin = {
 *         .name = "demo", .version = "1.0.0", .description = "A demo.",
 *         .auth = {.mode = "none"}, .tools = tools, .tool_count = WB_LEN(tools),
 *     };
 *     WB_PLUGIN(plugin)
 *     WB_EXPORT_TOOL(demo_echo)
 *
 * The JSON reader and writer, the arena and the input check are plain C11
 * and build natively too (the unit tests run them under gcc); only the ABI
 * glue needs the host.
 */
#ifndef WORKBENCH_H
#define WORKBENCH_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* WB_ABI_VERSION is the ABI this kit implements. */
#define WB_ABI_VERSION 1

/* WB_OK and WB_ERR are what a tool handler returns: success (the result
 * writer holds the result, or nothing was written and the result is {}), or a
 * tool error recorded with wb_fail or by a failed host call. */
#define WB_OK 0
#define WB_ERR 1

/* WB_LEN is the number of elements of a fixed-size array. */
#define WB_LEN(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__) || defined(__clang__)
#define WB_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define WB_PRINTF(fmt_index, first_arg)
#endif

/* ------------------------------------------------------------------------
 * Arena: bump allocation released all at once.
 * ------------------------------------------------------------------------ */

/* wb_arena hands out memory that lives until wb_arena_free. */
typedef struct wb_arena wb_arena;

/* WB_ARENA_DEFAULT_LIMIT caps what one arena hands out when created with
 * limit 0. The instance's memory page limit usually stops a call first. */
#define WB_ARENA_DEFAULT_LIMIT ((size_t)256 << 20)

/* wb_arena_new returns an empty arena that hands out at most limit bytes in
 * total (0 means WB_ARENA_DEFAULT_LIMIT), or NULL without memory. */
wb_arena *wb_arena_new(size_t limit);
/* wb_arena_free releases the arena and everything allocated from it. */
void wb_arena_free(wb_arena *a);
/* wb_arena_alloc returns n bytes aligned to 8, or NULL when the arena's
 * limit or memory is exhausted. */
void *wb_arena_alloc(wb_arena *a, size_t n);
/* wb_arena_grow resizes the allocation at p from old_n to new_n bytes,
 * in place when p is the arena's latest allocation, else by copying. It
 * returns the (possibly moved) allocation or NULL; p stays valid on NULL. */
void *wb_arena_grow(wb_arena *a, void *p, size_t old_n, size_t new_n);
/* wb_arena_strndup copies n bytes of s and a terminating NUL. */
char *wb_arena_strndup(wb_arena *a, const char *s, size_t n);
/* wb_arena_strdup copies the NUL-terminated s (NULL gives NULL). */
char *wb_arena_strdup(wb_arena *a, const char *s);
/* wb_arena_printf formats into a new NUL-terminated string. */
char *wb_arena_printf(wb_arena *a, const char *fmt, ...) WB_PRINTF(2, 3);
/* wb_arena_vprintf is wb_arena_printf with a va_list. */
char *wb_arena_vprintf(wb_arena *a, const char *fmt, va_list ap);

/* ------------------------------------------------------------------------
 * JSON reader.
 * ------------------------------------------------------------------------ */

/* WB_JSON_MAX_DEPTH bounds the nesting of arrays and objects the reader
 * accepts and the writer produces. */
#define WB_JSON_MAX_DEPTH 64

/* wb_json_type is the kind of a JSON value. */
typedef enum {
	WB_JSON_NULL = 0,
	WB_JSON_BOOL,
	WB_JSON_NUMBER,
	WB_JSON_STRING,
	WB_JSON_ARRAY,
	WB_JSON_OBJECT,
} wb_json_type;

/* wb_json is one parsed value. Arrays and objects link their elements
 * through first and next, in document order; object members carry their key.
 * Strings are decoded (escapes resolved, invalid UTF-8 replaced by U+FFFD)
 * and NUL-terminated; len counts their bytes, which may include NUL bytes
 * from \u0000. Numbers keep their literal text in str. */
typedef struct wb_json wb_json;
struct wb_json {
	wb_json_type type;
	bool boolean;      /* WB_JSON_BOOL */
	double number;     /* WB_JSON_NUMBER */
	const char *str;   /* WB_JSON_STRING: the value; WB_JSON_NUMBER: its literal */
	size_t len;        /* string bytes, number literal bytes, or element count */
	const char *key;   /* the member's key inside an object, else NULL */
	size_t key_len;
	const wb_json *first; /* first element of an array or object */
	const wb_json *next;  /* next element of the enclosing array or object */
};

/* wb_json_error says where and why parsing failed. */
typedef struct {
	size_t offset;       /* byte offset of the problem */
	const char *message; /* a static description, such as "unexpected character" */
} wb_json_error;

/* wb_json_parse parses exactly one JSON value from text[0:len] into the
 * arena. Input is untrusted: nesting beyond WB_JSON_MAX_DEPTH, raw control
 * characters in strings, bad escapes, bad numbers and trailing data are
 * errors. It returns NULL on error and fills err when it is not NULL. */
const wb_json *wb_json_parse(wb_arena *a, const char *text, size_t len, wb_json_error *err);

/* wb_json_get returns the member key of obj (the last one when a key
 * repeats), or NULL when obj is not an object or has no such member. */
const wb_json *wb_json_get(const wb_json *obj, const char *key);
/* wb_json_path follows a dot-separated chain of object keys, such as
 * "data.actor.user"; NULL when any step is missing. */
const wb_json *wb_json_path(const wb_json *v, const char *dotted);
/* wb_json_at returns element i of an array or object, or NULL. */
const wb_json *wb_json_at(const wb_json *v, size_t i);
/* wb_json_string returns a string value, or NULL when v is not a string. */
const char *wb_json_string(const wb_json *v);
/* wb_json_int stores an integral number that fits in int64_t. */
bool wb_json_int(const wb_json *v, int64_t *out);
/* wb_json_number stores any number. */
bool wb_json_number(const wb_json *v, double *out);
/* wb_json_bool stores a boolean. */
bool wb_json_bool(const wb_json *v, bool *out);
/* wb_json_is_null reports whether v is a JSON null (false for NULL). */
bool wb_json_is_null(const wb_json *v);
/* wb_json_type_name returns "null", "boolean", "number", "string",
 * "array" or "object". */
const char *wb_json_type_name(wb_json_type t);

/* ------------------------------------------------------------------------
 * JSON writer.
 * ------------------------------------------------------------------------ */

/* wb_jw writes one JSON value into an arena buffer. Misuse (a value without a
 * key inside an object, unbalanced ends, too deep nesting) and running past
 * the limit make it fail; a failed writer ignores further calls and
 * wb_jw_finish returns NULL with the reason in fail_reason. Strings are
 * escaped (quote, backslash and every control character) and invalid UTF-8
 * is replaced by U+FFFD, so the output is always valid JSON. */
typedef struct {
	wb_arena *arena;
	char *buf;
	size_t len, cap, limit;
	int depth;
	uint8_t is_object[WB_JSON_MAX_DEPTH];
	uint8_t has_member[WB_JSON_MAX_DEPTH];
	bool after_key;
	bool done;
	bool failed;
	const char *fail_reason;
} wb_jw;

/* wb_jw_init prepares w to write at most limit bytes (0 means 16 MiB). */
void wb_jw_init(wb_jw *w, wb_arena *a, size_t limit);
void wb_jw_object(wb_jw *w);
void wb_jw_object_end(wb_jw *w);
void wb_jw_array(wb_jw *w);
void wb_jw_array_end(wb_jw *w);
/* wb_jw_key writes an object member's key; the next call writes its value. */
void wb_jw_key(wb_jw *w, const char *key);
void wb_jw_keyn(wb_jw *w, const char *key, size_t n);
/* wb_jw_string writes s, or null when s is NULL. */
void wb_jw_string(wb_jw *w, const char *s);
void wb_jw_stringn(wb_jw *w, const char *s, size_t n);
void wb_jw_int(wb_jw *w, int64_t v);
/* wb_jw_double writes the shortest text that reads back as v; NaN and
 * infinities, which JSON cannot express, are written as null. */
void wb_jw_double(wb_jw *w, double v);
void wb_jw_bool(wb_jw *w, bool v);
void wb_jw_null(wb_jw *w);
/* wb_jw_value writes a parsed value (NULL writes null); numbers keep their
 * literal text. */
void wb_jw_value(wb_jw *w, const wb_json *v);
/* wb_jw_raw writes JSON text after checking that it is one valid value. */
void wb_jw_raw(wb_jw *w, const char *json, size_t n);
/* Member shortcuts: key then value. */
void wb_jw_kv_string(wb_jw *w, const char *key, const char *s);
void wb_jw_kv_int(wb_jw *w, const char *key, int64_t v);
void wb_jw_kv_double(wb_jw *w, const char *key, double v);
void wb_jw_kv_bool(wb_jw *w, const char *key, bool v);
void wb_jw_kv_value(wb_jw *w, const char *key, const wb_json *v);
/* wb_jw_finish returns the NUL-terminated text and its length, or NULL when
 * the writer failed or the value is incomplete. */
const char *wb_jw_finish(wb_jw *w, size_t *len);

/* ------------------------------------------------------------------------
 * Input check: the subset of JSON Schema the kit enforces before a tool runs.
 * ------------------------------------------------------------------------ */

/* wb_schema_check checks value against schema and returns NULL when it
 * conforms, else a message naming the first offending field ("limit: must be
 * at most 100"). It enforces type (one or a list), enum, const, minimum,
 * maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength (in code
 * points), required, properties, additionalProperties (false or a schema),
 * items, minItems and maxItems; other keywords are ignored. */
const char *wb_schema_check(wb_arena *a, const wb_json *schema, const wb_json *value);

/* ------------------------------------------------------------------------
 * Declaring the plugin (docs/abi.md section 4).
 * ------------------------------------------------------------------------ */

typedef struct wb_call wb_call;

/* wb_tool_fn runs one tool call and returns WB_OK or WB_ERR. */
typedef int (*wb_tool_fn)(wb_call *c);

/* Tool annotations; an absent annotation is false. */
enum {
	WB_READ_ONLY = 1 << 0,
	WB_DESTRUCTIVE = 1 << 1,
	WB_IDEMPOTENT = 1 << 2,
	WB_OPEN_WORLD = 1 << 3,
};

/* wb_limits are resource requests; zero fields take the host's default.
 * memory_pages applies to the whole plugin only. */
typedef struct {
	int timeout_ms, memory_pages, output_bytes, response_bytes, concurrency;
} wb_limits;

/* wb_tool_def declares one tool. input_schema (and output_schema, optional)
 * are JSON Schema text with "type": "object". export_name defaults to the
 * slug. */
typedef struct {
	const char *slug;
	const char *title;
	const char *description;
	const char *input_schema;
	const char *output_schema;
	unsigned annotations;
	const char *export_name;
	wb_limits limits;
	wb_tool_fn fn;
} wb_tool_def;

/* wb_apikey_field is one field a user fills in when connecting. */
typedef struct {
	const char *name, *label, *pattern, *placeholder;
	bool secret, required;
} wb_apikey_field;

/* wb_setting is an operator setting read with wb_config. enum_values is a
 * NULL-terminated list or NULL. */
typedef struct {
	const char *name, *description;
	const char *const *enum_values;
	const char *default_value;
} wb_setting;

/* wb_auth is the auth block. mode is "oauth2", "apikey", "cookie" or
 * "none"; only the fields of that mode are used. String lists are
 * NULL-terminated. */
typedef struct {
	const char *mode;
	/* oauth2 */
	const char *authorize_url, *token_url, *token_auth, *refresh_url;
	const char *const *scopes;
	/* apikey: placement_in is "header", "query" or "basic" */
	const wb_apikey_field *fields;
	size_t field_count;
	const char *placement_in, *placement_name, *placement_value;
	const char *placement_username, *placement_password;
	/* cookie */
	const char *const *cookie_domains;
	const char *login_url;
} wb_auth;

/* wb_plugin_def declares the integration. String lists are NULL-terminated. */
typedef struct {
	const char *name, *version, *title, *description, *logo;
	const char *const *categories;
	const char *base_url;
	const char *const *hosts;
	const char *proxy_base_url;
	wb_auth auth;
	const wb_setting *settings;
	size_t setting_count;
	wb_limits limits;
	const wb_tool_def *tools;
	size_t tool_count;
} wb_plugin_def;

/* wb_plugin is defined by WB_PLUGIN in the plugin's source. */
const wb_plugin_def *wb_plugin(void);

/* WB_PLUGIN names the plugin's definition. */
#define WB_PLUGIN(def) \
	const wb_plugin_def *wb_plugin(void) { return &(def); }

#ifdef __wasm__
#define WB_EXPORT_AS(name) __attribute__((export_name(name)))
#else
#define WB_EXPORT_AS(name)
#endif

/* WB_EXPORT_TOOL defines the export of the tool whose export name (or slug)
 * is name, written as a C identifier. */
#define WB_EXPORT_TOOL(name) \
	WB_EXPORT_AS(#name) int32_t wb_tool_##name(uint8_t *input, uint32_t len); \
	int32_t wb_tool_##name(uint8_t *input, uint32_t len) { return wb_dispatch(#name, input, len); }

/* wb_dispatch runs the tool exported as export_name on the input the host
 * placed with wb_alloc, and reports the result or error to the host. It
 * takes ownership of input. */
int32_t wb_dispatch(const char *export_name, uint8_t *input, uint32_t len);

/* wb_manifest_json writes the manifest into the arena; NULL with *problem
 * set when the definition is inconsistent. Exposed for tests. */
const char *wb_manifest_json(wb_arena *a, const wb_plugin_def *p, size_t *len, const char **problem);

/* ------------------------------------------------------------------------
 * Inside a tool call.
 * ------------------------------------------------------------------------ */

/* wb_call_arena is the call's arena, released when the tool returns. */
wb_arena *wb_call_arena(wb_call *c);
/* wb_call_tool is the slug of the running tool. */
const char *wb_call_tool(wb_call *c);
/* wb_input is the input object (already checked against the input schema). */
const wb_json *wb_input(wb_call *c);
/* wb_arg returns the input member name, or NULL. */
const wb_json *wb_arg(wb_call *c, const char *name);
/* wb_arg_string returns a string member, or fallback when absent or null. */
const char *wb_arg_string(wb_call *c, const char *name, const char *fallback);
/* wb_arg_int returns an integer member, or fallback. */
int64_t wb_arg_int(wb_call *c, const char *name, int64_t fallback);
/* wb_arg_number returns a number member, or fallback. */
double wb_arg_number(wb_call *c, const char *name, double fallback);
/* wb_arg_bool returns a boolean member, or fallback. */
bool wb_arg_bool(wb_call *c, const char *name, bool fallback);

/* wb_result is the writer for the call's result. */
wb_jw *wb_result(wb_call *c);

/* Common error codes. Any upper-snake-case word is allowed. */
#define WB_TOOL_ERROR "TOOL_ERROR"
#define WB_INVALID_ARGUMENTS "INVALID_ARGUMENTS"
#define WB_NOT_FOUND "NOT_FOUND"
#define WB_UNAUTHORIZED "UNAUTHORIZED"
#define WB_FORBIDDEN "FORBIDDEN"
#define WB_CONFLICT "CONFLICT"
#define WB_RATE_LIMITED "RATE_LIMITED"
#define WB_UPSTREAM_ERROR "UPSTREAM_ERROR"
#define WB_UPSTREAM_TIMEOUT "UPSTREAM_TIMEOUT"
#define WB_INVALID_MANIFEST "INVALID_MANIFEST"

/* wb_fail records a tool error and returns WB_ERR. */
int wb_fail(wb_call *c, const char *code, const char *fmt, ...) WB_PRINTF(3, 4);
/* wb_fail_details is wb_fail with details: JSON text (checked; invalid text
 * is dropped with a warning in the log). */
int wb_fail_details(wb_call *c, const char *code, const char *details_json, const char *fmt, ...)
	WB_PRINTF(4, 5);
/* wb_error_code is the code of the recorded error, or NULL. */
const char *wb_error_code(wb_call *c);
/* wb_error_message is the message of the recorded error, or NULL. */
const char *wb_error_message(wb_call *c);
/* wb_clear_error forgets the recorded error. */
void wb_clear_error(wb_call *c);

/* Log levels of wb_log. */
enum { WB_LOG_DEBUG = 0, WB_LOG_INFO = 1, WB_LOG_WARN = 2, WB_LOG_ERROR = 3 };

/* wb_log writes one record to the plugin's log (at most 4 KiB are kept). */
void wb_log(int level, const char *fmt, ...) WB_PRINTF(2, 3);
/* wb_progress reports progress of the running call; total 0 means unknown. */
void wb_progress(double done, double total, const char *message);
/* wb_config returns a setting ("base_url", a declared setting or a
 * non-secret connection field) copied into the call's arena, or NULL when
 * it has no value. */
const char *wb_config(wb_call *c, const char *key);

/* wb_header is one request header. */
typedef struct {
	const char *name, *value;
} wb_header;

/* wb_http_request is one outbound request. method NULL means GET; body may
 * be NULL; timeout_ms 0 leaves the call's deadline as the only bound. */
typedef struct {
	const char *method;
	const char *url;
	const wb_header *headers;
	size_t header_count;
	const void *body;
	size_t body_len;
	uint32_t timeout_ms;
} wb_http_request;

/* wb_http_response is the upstream's answer; 4xx and 5xx are responses, not
 * failures. headers is an object of name to array of values; body is
 * NUL-terminated (body_len excludes the NUL). All of it lives in the call's
 * arena. */
typedef struct {
	int status;
	const char *url;
	const wb_json *headers;
	const char *body;
	size_t body_len;
} wb_http_response;

/* wb_http sends req through the host. It returns false when the host
 * refused or failed the request (EGRESS_DENIED, NOT_CONNECTED,
 * UPSTREAM_TIMEOUT, ...); that error is then the call's error, so the
 * handler can return WB_ERR to pass it on. */
bool wb_http(wb_call *c, const wb_http_request *req, wb_http_response *resp);
/* wb_http_header returns the first value of a response header, looked up
 * without regard to case, or NULL. */
const char *wb_http_header(const wb_http_response *r, const char *name);
/* wb_http_json parses the response body; on failure it records an
 * UPSTREAM_ERROR and returns NULL. */
const wb_json *wb_http_json(wb_call *c, const wb_http_response *r);

#ifdef __cplusplus
}
#endif

#endif /* WORKBENCH_H */
