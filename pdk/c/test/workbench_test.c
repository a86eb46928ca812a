/*
 * workbench_test.c: native unit tests of the C plugin kit. Built with gcc
 * (under AddressSanitizer and UBSan when available) by
 * plugins-wasm/newrelictest/pdk_native_test.go, which also fails when the
 * closing "N passed, N failed" line reports a failure.
 *
 * The host imports are replaced by the recording fakes below, so the ABI
 * glue (wb_alloc, manifest, wb_dispatch, wb_http, wb_config) runs too.
 */
#include "../workbench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define CHECK(cond, ...)                                             \
	do {                                                             \
		if (cond) {                                                  \
			passed++;                                                \
		} else {                                                     \
			failed++;                                                \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);     \
			fprintf(stderr, __VA_ARGS__);                            \
			fprintf(stderr, "\n");                                   \
		}                                                            \
	} while (0)

/* ------------------------------------------------------------------------
 * Fake host
 * ------------------------------------------------------------------------ */

static char host_output[1 << 16];
static size_t host_output_len;
static char host_pending[1 << 16];
static size_t host_pending_len;
static int host_has_pending;
static char host_last_log[4200];
static int host_last_log_level = -1;
static double host_progress_done, host_progress_total;
static char host_progress_msg[64];
static char host_last_request[4096];
static char host_last_body[4096];
static size_t host_last_body_len;
/* host_http_* is what the next http_request answers. */
static const char *host_http_head, *host_http_body, *host_http_error;

void wb_host_output_set(const void *ptr, uint32_t len) {
	if (len > sizeof host_output - 1) {
		len = sizeof host_output - 1;
	}
	memcpy(host_output, ptr, len);
	host_output[len] = 0;
	host_output_len = len;
}

int32_t wb_host_result_read(void *ptr, uint32_t len) {
	if (!host_has_pending) {
		return -1;
	}
	size_t n = len < host_pending_len ? len : host_pending_len;
	memcpy(ptr, host_pending, n);
	return (int32_t)n;
}

void wb_host_log(int32_t level, const void *ptr, uint32_t len) {
	if (len > sizeof host_last_log - 1) {
		len = sizeof host_last_log - 1;
	}
	memcpy(host_last_log, ptr, len);
	host_last_log[len] = 0;
	host_last_log_level = level;
}

static void set_pending(const char *a, size_t al, const char *b, size_t bl) {
	memcpy(host_pending, a, al);
	memcpy(host_pending + al, b, bl);
	host_pending_len = al + bl;
	host_has_pending = 1;
}

int32_t wb_host_config_get(const void *key, uint32_t len) {
	if (len == 6 && memcmp(key, "region", 6) == 0) {
		set_pending("EU", 2, "", 0);
		return 2;
	}
	return -1;
}

void wb_host_progress(double done, double total, const void *msg, uint32_t len) {
	host_progress_done = done;
	host_progress_total = total;
	if (len > sizeof host_progress_msg - 1) {
		len = sizeof host_progress_msg - 1;
	}
	memcpy(host_progress_msg, msg, len);
	host_progress_msg[len] = 0;
}

int64_t wb_host_http_request(const void *req, uint32_t req_len, const void *body, uint32_t body_len) {
	size_t n = req_len < sizeof host_last_request - 1 ? req_len : sizeof host_last_request - 1;
	memcpy(host_last_request, req, n);
	host_last_request[n] = 0;
	host_last_body_len = body_len < sizeof host_last_body ? body_len : sizeof host_last_body;
	if (body_len) {
		memcpy(host_last_body, body, host_last_body_len);
	}
	if (host_http_error) {
		set_pending(host_http_error, strlen(host_http_error), "", 0);
		return -(int64_t)strlen(host_http_error);
	}
	size_t hl = strlen(host_http_head), bl = strlen(host_http_body);
	set_pending(host_http_head, hl, host_http_body, bl);
	return (int64_t)(((uint64_t)hl << 32) | bl);
}

/* ------------------------------------------------------------------------
 * A plugin for the dispatch tests
 * ------------------------------------------------------------------------ */

static int t_echo(wb_call *c) {
	wb_jw_value(wb_result(c), wb_input(c));
	return WB_OK;
}

static int t_fail(wb_call *c) { return wb_fail_details(c, "NOT_FOUND", "{\"id\":7}", "nothing %s", "here"); }

static int t_silent_fail(wb_call *c) {
	(void)c;
	return WB_ERR;
}

static int t_bad_status(wb_call *c) {
	(void)c;
	return 7;
}

static int t_unbalanced(wb_call *c) {
	wb_jw_object(wb_result(c));
	return WB_OK;
}

static int t_nothing(wb_call *c) {
	(void)c;
	return WB_OK;
}

static int t_http(wb_call *c) {
	wb_header headers[] = {{"Accept", "application/json"}, {"X-Multi", "a"}, {"x-multi", "b"}};
	const char body[] = "{\"q\":1}";
	wb_http_request req = {.method = "POST", .url = "https://api.example.com/x", .headers = headers,
	                       .header_count = WB_LEN(headers), .body = body, .body_len = sizeof body - 1,
	                       .timeout_ms = 5000};
	wb_http_response resp;
	if (!wb_http(c, &req, &resp)) {
		return WB_ERR;
	}
	const wb_json *doc = wb_http_json(c, &resp);
	if (!doc) {
		return WB_ERR;
	}
	wb_jw *out = wb_result(c);
	wb_jw_object(out);
	wb_jw_kv_int(out, "status", resp.status);
	wb_jw_kv_string(out, "type", wb_http_header(&resp, "content-type"));
	wb_jw_kv_string(out, "url", resp.url);
	wb_jw_kv_value(out, "doc", doc);
	wb_jw_object_end(out);
	return WB_OK;
}

static int t_config(wb_call *c) {
	wb_jw *out = wb_result(c);
	wb_jw_object(out);
	wb_jw_kv_string(out, "region", wb_config(c, "region"));
	wb_jw_kv_string(out, "missing", wb_config(c, "missing"));
	wb_jw_object_end(out);
	wb_log(WB_LOG_WARN, "config read %d", 2);
	wb_progress(1, 2, "half");
	return WB_OK;
}

static const char limit_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"name\":{\"type\":\"string\",\"minLength\":2,\"maxLength\":4},"
	"\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100},"
	"\"mode\":{\"type\":\"string\",\"enum\":[\"US\",\"EU\"]},"
	"\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":2},"
	"\"inner\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"number\",\"exclusiveMinimum\":0}},"
	"\"required\":[\"n\"]}"
	"},\"required\":[\"name\"],\"additionalProperties\":false}";

static const wb_tool_def test_tools[] = {
	{.slug = "demo_echo", .description = "echo", .input_schema = "{\"type\":\"object\"}", .fn = t_echo,
	 .annotations = WB_READ_ONLY | WB_IDEMPOTENT},
	{.slug = "demo_fail", .description = "fail", .input_schema = "{\"type\":\"object\"}", .fn = t_fail},
	{.slug = "demo_silent", .description = "silent", .input_schema = "{\"type\":\"object\"}", .fn = t_silent_fail},
	{.slug = "demo_status", .description = "status", .input_schema = "{\"type\":\"object\"}", .fn = t_bad_status},
	{.slug = "demo_unbalanced", .description = "unbalanced", .input_schema = "{\"type\":\"object\"}",
	 .fn = t_unbalanced},
	{.slug = "demo_nothing", .description = "nothing", .input_schema = "{\"type\":\"object\"}", .fn = t_nothing,
	 .export_name = "nothing_export", .annotations = WB_DESTRUCTIVE, .limits = {.timeout_ms = 500}},
	{.slug = "demo_http", .description = "http", .input_schema = "{\"type\":\"object\"}", .fn = t_http},
	{.slug = "demo_config", .description = "config", .input_schema = "{\"type\":\"object\"}", .fn = t_config},
	{.slug = "demo_checked", .description = "checked", .input_schema = limit_schema, .fn = t_echo},
};

static const wb_apikey_field test_fields[] = {
	{.name = "api_key", .label = "Key", .secret = true, .required = true, .pattern = "^K"}};
static const char *const test_hosts[] = {"api.example.com", NULL};
static const char *const test_regions[] = {"US", "EU", NULL};
static const wb_setting test_settings[] = {
	{.name = "region", .description = "Region", .enum_values = test_regions, .default_value = "US"}};

static const wb_plugin_def test_plugin = {
	.name = "demo",
	.version = "0.1.0",
	.description = "A \"demo\"\n plugin",
	.hosts = test_hosts,
	.auth = {.mode = "apikey", .fields = test_fields, .field_count = WB_LEN(test_fields),
	         .placement_in = "header", .placement_name = "API-Key", .placement_value = "{api_key}"},
	.settings = test_settings,
	.setting_count = WB_LEN(test_settings),
	.limits = {.memory_pages = 1024},
	.tools = test_tools,
	.tool_count = WB_LEN(test_tools),
};

WB_PLUGIN(test_plugin)

void *wb_alloc(uint32_t size);
int32_t wb_manifest_export(void);

/* call runs a tool through wb_alloc and wb_dispatch like the host does. */
static int32_t call(const char *export_name, const char *input) {
	size_t n = strlen(input);
	uint8_t *buf = n ? wb_alloc((uint32_t)n) : NULL;
	if (n) {
		memcpy(buf, input, n);
	}
	host_output_len = 0;
	host_output[0] = 0;
	return wb_dispatch(export_name, buf, (uint32_t)n);
}

/* ------------------------------------------------------------------------
 * Tests
 * ------------------------------------------------------------------------ */

/* roundtrip parses text and writes it back. */
static const char *roundtrip(wb_arena *a, const char *text, size_t n) {
	const wb_json *v = wb_json_parse(a, text, n, NULL);
	if (!v) {
		return NULL;
	}
	wb_jw w;
	wb_jw_init(&w, a, 0);
	wb_jw_value(&w, v);
	return wb_jw_finish(&w, NULL);
}

static void test_parse_valid(void) {
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"null", "null"},
		{" true ", "true"},
		{"false", "false"},
		{"0", "0"},
		{"-0", "-0"},
		{"-12.5e+3", "-12.5e+3"},
		{"1E-2", "1E-2"},
		{"\"\"", "\"\""},
		{"[]", "[]"},
		{"{}", "{}"},
		{"[1, [2, [3]], {\"a\" : {\"b\": null}}]", "[1,[2,[3]],{\"a\":{\"b\":null}}]"},
		{"\t\n\r {\"k\":\"v\"}\n", "{\"k\":\"v\"}"},
		{"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\\"\\\\/\\b\\f\\n\\r\\t\""},
		{"\"\\u00e9\\u4e2d\"", "\"\xc3\xa9\xe4\xb8\xad\""},
		{"\"\\ud83d\\ude00\"", "\"\xf0\x9f\x98\x80\""},
		{"\"\\ud83d x\"", "\"\xef\xbf\xbd x\""},
		{"\"\\ude00\"", "\"\xef\xbf\xbd\""},
		{"\"\\u001f\\u007f\"", "\"\\u001f\x7f\""},
		{"\"\xc3\xa9 caf\xe2\x82\xac\"", "\"\xc3\xa9 caf\xe2\x82\xac\""},
		{"\"a\xff" "b\"", "\"a\xef\xbf\xbd" "b\""},
		{"\"\xc0\xaf\"", "\"\xef\xbf\xbd\xef\xbf\xbd\""},
		{"\"\xed\xa0\x80\"", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},
		{"{\"a\":1,\"a\":2}", "{\"a\":1,\"a\":2}"},
	};
	for (size_t i = 0; i < WB_LEN(cases); i++) {
		wb_arena *a = wb_arena_new(0);
		const char *got = roundtrip(a, cases[i].in, strlen(cases[i].in));
		CHECK(got && strcmp(got, cases[i].out) == 0, "roundtrip(%s) = %s, want %s", cases[i].in, got ? got : "(null)",
		      cases[i].out);
		wb_arena_free(a);
	}
}

static void test_parse_invalid(void) {
	static const struct {
		const char *in;
		const char *message;
	} cases[] = {
		{"", "unexpected end of input"},
		{"   ", "unexpected end of input"},
		{"nul", "unexpected character"},
		{"True", "unexpected character"},
		{"01", "unexpected data after the value"},
		{"1.", "invalid number: digits must follow '.'"},
		{".5", "unexpected character"},
		{"-", "invalid number"},
		{"1e", "invalid number: digits must follow the exponent"},
		{"+1", "unexpected character"},
		{"[1,]", "unexpected character"},
		{"[1 2]", "expected ',' or ']'"},
		{"{\"a\" 1}", "expected ':' after the key"},
		{"{a:1}", "expected a string key"},
		{"{\"a\":1,}", "expected a string key"},
		{"\"abc", "unterminated string"},
		{"\"a\\", "unterminated string"},
		{"\"\\x\"", "invalid escape in string"},
		{"\"\\u12g4\"", "invalid \\u escape in string"},
		{"\"\\u12\"", "invalid \\u escape in string"},
		{"\"a\nb\"", "control character in string"},
		{"[] []", "unexpected data after the value"},
		{"{\"a\":1}}", "unexpected data after the value"},
		{"NaN", "unexpected character"},
	};
	for (size_t i = 0; i < WB_LEN(cases); i++) {
		wb_arena *a = wb_arena_new(0);
		wb_json_error err = {0};
		const wb_json *v = wb_json_parse(a, cases[i].in, strlen(cases[i].in), &err);
		CHECK(!v && err.message && strcmp(err.message, cases[i].message) == 0, "parse(%s): got %s, want error %s",
		      cases[i].in, v ? "a value" : err.message, cases[i].message);
		wb_arena_free(a);
	}
	/* An embedded NUL byte outside a string is an error, inside one too. */
	wb_arena *a = wb_arena_new(0);
	CHECK(!wb_json_parse(a, "1\0", 2, NULL), "trailing NUL accepted");
	CHECK(!wb_json_parse(a, "\"a\0\"", 4, NULL), "raw NUL in string accepted");
	CHECK(!wb_json_parse(a, NULL, 0, NULL), "NULL text accepted");
	wb_arena_free(a);
}

static void test_depth_limit(void) {
	char buf[512];
	for (int depth = 63; depth <= 66; depth++) {
		size_t n = 0;
		for (int i = 0; i < depth; i++) {
			buf[n++] = i % 2 ? '{' : '[';
			if (i % 2) {
				memcpy(buf + n, "\"k\":", 4);
				n += 4;
			}
		}
		buf[n++] = '1';
		for (int i = depth - 1; i >= 0; i--) {
			buf[n++] = i % 2 ? '}' : ']';
		}
		wb_arena *a = wb_arena_new(0);
		wb_json_error err = {0};
		const wb_json *v = wb_json_parse(a, buf, n, &err);
		if (depth <= WB_JSON_MAX_DEPTH) {
			CHECK(v != NULL, "depth %d rejected: %s", depth, err.message);
			wb_jw w;
			wb_jw_init(&w, a, 0);
			wb_jw_value(&w, v);
			size_t len = 0;
			const char *out = wb_jw_finish(&w, &len);
			CHECK(out && len == n && memcmp(out, buf, n) == 0, "depth %d did not round-trip", depth);
		} else {
			CHECK(!v && strcmp(err.message, "nesting is deeper than the limit of 64") == 0, "depth %d accepted", depth);
		}
		wb_arena_free(a);
	}
	/* A hostile 1 MB of '[' fails fast on the limit, not on the stack. */
	size_t big = 1 << 20;
	char *deep = malloc(big);
	memset(deep, '[', big);
	wb_arena *a = wb_arena_new(0);
	wb_json_error err = {0};
	CHECK(!wb_json_parse(a, deep, big, &err) && err.offset == WB_JSON_MAX_DEPTH, "deep input: offset %zu",
	      err.offset);
	wb_arena_free(a);
	free(deep);
}

static void test_accessors(void) {
	wb_arena *a = wb_arena_new(0);
	const char text[] = "{\"s\":\"x\\u0000y\",\"i\":-9223372036854775808,\"big\":9223372036854775808,"
	                    "\"f\":2.5,\"e\":1e3,\"b\":true,\"n\":null,\"arr\":[10,20,30],"
	                    "\"data\":{\"actor\":{\"user\":{\"name\":\"Ann\"}}},\"dup\":1,\"dup\":2}";
	const wb_json *v = wb_json_parse(a, text, sizeof text - 1, NULL);
	CHECK(v && v->type == WB_JSON_OBJECT && v->len == 11, "object with 11 members");
	const wb_json *s = wb_json_get(v, "s");
	CHECK(s && s->len == 3 && memcmp(s->str, "x\0y", 3) == 0, "string with NUL");
	int64_t i = 0;
	CHECK(wb_json_int(wb_json_get(v, "i"), &i) && i == INT64_MIN, "int64 min");
	CHECK(!wb_json_int(wb_json_get(v, "big"), &i), "int64 overflow rejected");
	CHECK(!wb_json_int(wb_json_get(v, "f"), &i), "2.5 is no integer");
	CHECK(wb_json_int(wb_json_get(v, "e"), &i) && i == 1000, "1e3 is the integer 1000");
	double d = 0;
	CHECK(wb_json_number(wb_json_get(v, "f"), &d) && d == 2.5, "number 2.5");
	bool b = false;
	CHECK(wb_json_bool(wb_json_get(v, "b"), &b) && b, "bool");
	CHECK(wb_json_is_null(wb_json_get(v, "n")) && !wb_json_is_null(wb_json_get(v, "nope")), "null vs missing");
	CHECK(!wb_json_string(wb_json_get(v, "i")), "wb_json_string of a number");
	CHECK(wb_json_int(wb_json_at(wb_json_get(v, "arr"), 2), &i) && i == 30, "array index");
	CHECK(!wb_json_at(wb_json_get(v, "arr"), 3), "array index out of range");
	const char *name = wb_json_string(wb_json_path(v, "data.actor.user.name"));
	CHECK(name && strcmp(name, "Ann") == 0, "path");
	CHECK(!wb_json_path(v, "data.actor.nobody.name"), "missing path");
	CHECK(wb_json_int(wb_json_get(v, "dup"), &i) && i == 2, "duplicate key: last wins");
	CHECK(!wb_json_get(wb_json_get(v, "arr"), "x"), "get on an array");
	wb_arena_free(a);
}

static void test_writer(void) {
	wb_arena *a = wb_arena_new(0);
	wb_jw w;
	wb_jw_init(&w, a, 0);
	wb_jw_object(&w);
	wb_jw_kv_string(&w, "ctl", "\x01\x1f\t\n\r\b\f\"\\/");
	wb_jw_kv_string(&w, "utf8", "\xe2\x82\xac\xf0\x9f\x98\x80");
	wb_jw_kv_string(&w, "bad", "a\xff\xc3(b\xe2\x82");
	wb_jw_kv_string(&w, "null", NULL);
	wb_jw_key(&w, "nul");
	wb_jw_stringn(&w, "a\0b", 3);
	wb_jw_kv_int(&w, "min", INT64_MIN);
	wb_jw_kv_int(&w, "max", INT64_MAX);
	wb_jw_kv_double(&w, "tenth", 0.1);
	wb_jw_kv_double(&w, "third", 1.0 / 3.0);
	wb_jw_kv_double(&w, "big", 1e300);
	wb_jw_kv_double(&w, "nan", NAN);
	wb_jw_kv_double(&w, "inf", -INFINITY);
	wb_jw_kv_bool(&w, "t", true);
	wb_jw_key(&w, "arr");
	wb_jw_array(&w);
	wb_jw_int(&w, 1);
	wb_jw_array(&w);
	wb_jw_array_end(&w);
	wb_jw_object(&w);
	wb_jw_object_end(&w);
	wb_jw_null(&w);
	wb_jw_array_end(&w);
	wb_jw_key(&w, "k\"ey\n");
	wb_jw_raw(&w, " [1, \"x\"] ", 10);
	wb_jw_object_end(&w);
	size_t len = 0;
	const char *out = wb_jw_finish(&w, &len);
	const char *want = "{\"ctl\":\"\\u0001\\u001f\\t\\n\\r\\b\\f\\\"\\\\/\","
	                   "\"utf8\":\"\xe2\x82\xac\xf0\x9f\x98\x80\","
	                   "\"bad\":\"a\xef\xbf\xbd\xef\xbf\xbd(b\xef\xbf\xbd\xef\xbf\xbd\","
	                   "\"null\":null,\"nul\":\"a\\u0000b\","
	                   "\"min\":-9223372036854775808,\"max\":9223372036854775807,"
	                   "\"tenth\":0.1,\"third\":0.3333333333333333,\"big\":1e+300,\"nan\":null,\"inf\":null,"
	                   "\"t\":true,\"arr\":[1,[],{},null],\"k\\\"ey\\n\":[1,\"x\"]}";
	CHECK(out && strcmp(out, want) == 0 && len == strlen(want), "writer output\n got %s\nwant %s", out ? out : w.fail_reason,
	      want);
	/* Whatever the writer produced parses back. */
	CHECK(out && wb_json_parse(a, out, len, NULL), "writer output does not parse");
	wb_arena_free(a);
}

typedef void (*misuse_fn)(wb_jw *w);
static void m_value_without_key(wb_jw *w) {
	wb_jw_object(w);
	wb_jw_int(w, 1);
}
static void m_key_in_array(wb_jw *w) {
	wb_jw_array(w);
	wb_jw_key(w, "k");
}
static void m_two_keys(wb_jw *w) {
	wb_jw_object(w);
	wb_jw_key(w, "a");
	wb_jw_key(w, "b");
}
static void m_wrong_end(wb_jw *w) {
	wb_jw_object(w);
	wb_jw_array_end(w);
}
static void m_end_after_key(wb_jw *w) {
	wb_jw_object(w);
	wb_jw_key(w, "a");
	wb_jw_object_end(w);
}
static void m_two_values(wb_jw *w) {
	wb_jw_int(w, 1);
	wb_jw_int(w, 2);
}
static void m_incomplete(wb_jw *w) { wb_jw_array(w); }
static void m_nothing(wb_jw *w) { (void)w; }
static void m_too_deep(wb_jw *w) {
	for (int i = 0; i <= WB_JSON_MAX_DEPTH; i++) {
		wb_jw_array(w);
	}
}
static void m_bad_raw(wb_jw *w) { wb_jw_raw(w, "{]", 2); }
static void m_over_limit(wb_jw *w) {
	wb_jw_array(w);
	for (int i = 0; i < 100; i++) {
		wb_jw_string(w, "0123456789");
	}
	wb_jw_array_end(w);
}

static void test_writer_misuse(void) {
	static const struct {
		const char *name;
		misuse_fn fn;
		const char *reason;
	} cases[] = {
		{"value without key", m_value_without_key, "a value inside an object without a key"},
		{"key in array", m_key_in_array, "a key outside an object"},
		{"two keys", m_two_keys, "two keys in a row"},
		{"wrong end", m_wrong_end, "array end without a matching array"},
		{"end after key", m_end_after_key, "object end right after a key"},
		{"two values", m_two_values, "a second top-level value"},
		{"incomplete", m_incomplete, "the value is incomplete"},
		{"nothing", m_nothing, "the value is incomplete"},
		{"too deep", m_too_deep, "nesting is deeper than the limit of 64"},
		{"bad raw", m_bad_raw, "raw text is not one valid JSON value"},
		{"over limit", m_over_limit, "output exceeds the writer's limit"},
	};
	for (size_t i = 0; i < WB_LEN(cases); i++) {
		wb_arena *a = wb_arena_new(0);
		wb_jw w;
		wb_jw_init(&w, a, 512);
		cases[i].fn(&w);
		const char *out = wb_jw_finish(&w, NULL);
		CHECK(!out && w.fail_reason && strcmp(w.fail_reason, cases[i].reason) == 0, "%s: got %s, want %s",
		      cases[i].name, out ? out : w.fail_reason, cases[i].reason);
		wb_arena_free(a);
	}
}

static void test_arena(void) {
	wb_arena *a = wb_arena_new(1000);
	void *p = wb_arena_alloc(a, 600);
	CHECK(p != NULL, "600 of 1000");
	CHECK(wb_arena_alloc(a, 600) == NULL, "over the arena limit");
	CHECK(wb_arena_alloc(a, SIZE_MAX) == NULL, "SIZE_MAX");
	char *q = wb_arena_grow(a, p, 600, 900);
	CHECK(q == p, "the latest allocation grows in place");
	CHECK(wb_arena_grow(a, q, 900, 2000) == NULL, "growth over the limit");
	wb_arena_free(a);

	a = wb_arena_new(0);
	char *s = wb_arena_printf(a, "%s-%d", "x", 42);
	CHECK(s && strcmp(s, "x-42") == 0, "printf");
	/* Big allocations get their own chunks and everything stays intact. */
	char *small = wb_arena_strdup(a, "keep");
	char *large = wb_arena_alloc(a, 200000);
	memset(large, 'z', 200000);
	char *after = wb_arena_strdup(a, "after");
	CHECK(strcmp(small, "keep") == 0 && strcmp(after, "after") == 0 && large[199999] == 'z', "chunks");
	wb_arena_free(a);
}

static void test_schema(void) {
	static const struct {
		const char *input;
		const char *want; /* NULL: valid */
	} cases[] = {
		{"{\"name\":\"ab\"}", NULL},
		{"{\"name\":\"abcd\",\"limit\":100,\"mode\":\"EU\",\"tags\":[\"x\"],\"inner\":{\"n\":0.5}}", NULL},
		{"{}", "name: is required"},
		{"{\"name\":5}", "name: must be a string, not number"},
		{"{\"name\":\"a\"}", "name: must be at least 2 characters long"},
		{"{\"name\":\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"}", NULL},
		{"{\"name\":\"abcde\"}", "name: must be at most 4 characters long"},
		{"{\"name\":\"ab\",\"limit\":0}", "limit: must be at least 1"},
		{"{\"name\":\"ab\",\"limit\":101}", "limit: must be at most 100"},
		{"{\"name\":\"ab\",\"limit\":1.5}", "limit: must be an integer, not number"},
		{"{\"name\":\"ab\",\"limit\":\"5\"}", "limit: must be an integer, not string"},
		{"{\"name\":\"ab\",\"mode\":\"APAC\"}", "mode: must be one of [\"US\",\"EU\"]"},
		{"{\"name\":\"ab\",\"tags\":[\"x\",2]}", "tags[1]: must be a string, not number"},
		{"{\"name\":\"ab\",\"tags\":[\"x\",\"y\",\"z\"]}", "tags: must have at most 2 items"},
		{"{\"name\":\"ab\",\"inner\":{}}", "inner.n: is required"},
		{"{\"name\":\"ab\",\"inner\":{\"n\":0}}", "inner.n: must be greater than 0"},
		{"{\"name\":\"ab\",\"extra\":1}", "extra: is not a known field"},
	};
	for (size_t i = 0; i < WB_LEN(cases); i++) {
		wb_arena *a = wb_arena_new(0);
		const wb_json *schema = wb_json_parse(a, limit_schema, strlen(limit_schema), NULL);
		const wb_json *v = wb_json_parse(a, cases[i].input, strlen(cases[i].input), NULL);
		const char *got = wb_schema_check(a, schema, v);
		bool ok = cases[i].want ? (got && strcmp(got, cases[i].want) == 0) : got == NULL;
		CHECK(ok, "schema(%s) = %s, want %s", cases[i].input, got ? got : "valid", cases[i].want ? cases[i].want : "valid");
		wb_arena_free(a);
	}
}

static void test_manifest(void) {
	CHECK(wb_manifest_export() == WB_OK, "manifest status");
	wb_arena *a = wb_arena_new(0);
	const wb_json *m = wb_json_parse(a, host_output, host_output_len, NULL);
	CHECK(m != NULL, "manifest is JSON: %s", host_output);
	int64_t abi = 0;
	CHECK(wb_json_int(wb_json_get(m, "abi"), &abi) && abi == 1, "abi");
	CHECK(strcmp(wb_json_string(wb_json_get(m, "description")), "A \"demo\"\n plugin") == 0, "description");
	CHECK(strcmp(wb_json_string(wb_json_path(m, "auth.apikey.placement.name")), "API-Key") == 0, "placement");
	CHECK(wb_json_get(wb_json_at(wb_json_path(m, "auth.apikey.fields"), 0), "secret")->boolean, "secret field");
	CHECK(strcmp(wb_json_string(wb_json_at(wb_json_get(wb_json_at(wb_json_get(m, "settings"), 0), "enum"), 1)), "EU") == 0,
	      "settings enum");
	int64_t pages = 0;
	CHECK(wb_json_int(wb_json_path(m, "limits.memoryPages"), &pages) && pages == 1024, "memoryPages");
	const wb_json *tools = wb_json_get(m, "tools");
	CHECK(tools && tools->len == WB_LEN(test_tools), "tool count");
	const wb_json *nothing = wb_json_at(tools, 5);
	CHECK(strcmp(wb_json_string(wb_json_get(nothing, "export")), "nothing_export") == 0, "export");
	CHECK(wb_json_path(nothing, "annotations.destructive")->boolean && !wb_json_path(nothing, "annotations.readOnly")->boolean,
	      "annotations");
	CHECK(wb_json_path(nothing, "limits.timeoutMs") && !wb_json_path(nothing, "limits.memoryPages"), "tool limits");
	CHECK(!wb_json_get(wb_json_at(tools, 0), "export"), "export defaults to the slug");
	CHECK(wb_json_path(wb_json_at(tools, 8), "inputSchema.properties.limit.maximum") != NULL, "schema embedded");

	/* Inconsistent definitions are refused with a reason. */
	wb_tool_def bad[] = {test_tools[0], test_tools[1]};
	wb_plugin_def p = test_plugin;
	p.tools = bad;
	p.tool_count = 2;
	static const struct {
		const char *field;
		const char *want;
	} cases[] = {
		{"prefix", "tools[1]: slug other_fail must start with demo_"},
		{"duplicate", "demo_echo is declared twice"},
		{"export", "demo_echo and demo_fail share the export demo_echo"},
		{"schema", "demo_fail: input schema must be an object schema with \"type\": \"object\""},
		{"json", "demo_fail: input schema is not JSON: unexpected end of input at offset 1"},
		{"annotations", "demo_fail: a tool cannot be both read-only and destructive"},
		{"fn", "demo_fail: no handler function"},
	};
	for (size_t i = 0; i < WB_LEN(cases); i++) {
		bad[1] = test_tools[1];
		const char *f = cases[i].field;
		if (!strcmp(f, "prefix")) bad[1].slug = "other_fail";
		if (!strcmp(f, "duplicate")) bad[1].slug = "demo_echo";
		if (!strcmp(f, "export")) bad[1].export_name = "demo_echo";
		if (!strcmp(f, "schema")) bad[1].input_schema = "{\"type\":\"array\"}";
		if (!strcmp(f, "json")) bad[1].input_schema = "{";
		if (!strcmp(f, "annotations")) bad[1].annotations = WB_READ_ONLY | WB_DESTRUCTIVE;
		if (!strcmp(f, "fn")) bad[1].fn = NULL;
		const char *problem = NULL;
		const char *out = wb_manifest_json(a, &p, NULL, &problem);
		CHECK(!out && problem && strcmp(problem, cases[i].want) == 0, "%s: got %s", f, out ? out : problem);
	}
	wb_arena_free(a);
}

static void expect_output(int32_t status, int32_t want_status, const char *want, const char *what) {
	CHECK(status == want_status && strcmp(host_output, want) == 0, "%s: status %d output %s\n want %d %s", what, status,
	      host_output, want_status, want);
}

static void test_dispatch(void) {
	expect_output(call("demo_echo", "{\"a\":[1,2.50,\"\\u00e9\"],\"b\":{}}"), 0, "{\"a\":[1,2.50,\"\xc3\xa9\"],\"b\":{}}",
	              "echo");
	expect_output(call("demo_echo", ""), 0, "{}", "echo of empty input");
	expect_output(call("demo_echo", "[1]"), 1, "{\"code\":\"INVALID_ARGUMENTS\",\"message\":\"input must be an object, not array\"}",
	              "array input");
	expect_output(call("demo_echo", "{\"a\":"), 1,
	              "{\"code\":\"INVALID_ARGUMENTS\",\"message\":\"input is not valid JSON: unexpected end of input at offset 5\"}",
	              "broken input");
	expect_output(call("demo_fail", "{}"), 1, "{\"code\":\"NOT_FOUND\",\"message\":\"nothing here\",\"details\":{\"id\":7}}",
	              "fail");
	expect_output(call("demo_silent", "{}"), 1,
	              "{\"code\":\"TOOL_ERROR\",\"message\":\"demo_silent failed without reporting an error\"}", "silent");
	expect_output(call("demo_status", "{}"), 1,
	              "{\"code\":\"TOOL_ERROR\",\"message\":\"demo_status returned status 7; handlers return WB_OK or WB_ERR\"}",
	              "status");
	expect_output(call("demo_unbalanced", "{}"), 1,
	              "{\"code\":\"TOOL_ERROR\",\"message\":\"demo_unbalanced produced an unusable result: the value is incomplete\"}",
	              "unbalanced");
	expect_output(call("nothing_export", "{}"), 0, "{}", "custom export");
	expect_output(call("demo_nothing", "{}"), 1,
	              "{\"code\":\"TOOL_ERROR\",\"message\":\"no tool is declared for the export demo_nothing\"}", "slug is not the export");
	expect_output(call("demo_checked", "{\"name\":\"ab\",\"limit\":500}"), 1,
	              "{\"code\":\"INVALID_ARGUMENTS\",\"message\":\"limit: must be at most 100\"}", "schema check");

	host_http_error = NULL;
	host_http_head = "{\"status\":201,\"headers\":{\"Content-Type\":[\"application/json\"]},\"url\":\"https://api.example.com/x\"}";
	host_http_body = "{\"ok\":true}";
	expect_output(call("demo_http", "{}"), 0,
	              "{\"status\":201,\"type\":\"application/json\",\"url\":\"https://api.example.com/x\",\"doc\":{\"ok\":true}}", "http");
	CHECK(strcmp(host_last_request, "{\"method\":\"POST\",\"url\":\"https://api.example.com/x\",\"headers\":{\"Accept\":"
	                                "[\"application/json\"],\"X-Multi\":[\"a\",\"b\"]},\"timeoutMs\":5000}") == 0,
	      "request head %s", host_last_request);
	CHECK(host_last_body_len == 7 && memcmp(host_last_body, "{\"q\":1}", 7) == 0, "request body");
	host_http_body = "<html>";
	expect_output(call("demo_http", "{}"), 1,
	              "{\"code\":\"UPSTREAM_ERROR\",\"message\":\"the response from https://api.example.com/x (status 201) is not JSON: "
	              "unexpected character at offset 0\"}",
	              "http non-JSON body");
	host_http_error = "{\"code\":\"EGRESS_DENIED\",\"message\":\"api.example.com is not allowed\"}";
	expect_output(call("demo_http", "{}"), 1, "{\"code\":\"EGRESS_DENIED\",\"message\":\"api.example.com is not allowed\"}",
	              "http host failure");
	host_http_error = "not json";
	expect_output(call("demo_http", "{}"), 1,
	              "{\"code\":\"TOOL_ERROR\",\"message\":\"the host reported an unreadable HTTP failure\"}", "http unreadable failure");
	host_http_error = NULL;

	expect_output(call("demo_config", "{}"), 0, "{\"region\":\"EU\",\"missing\":null}", "config");
	CHECK(host_last_log_level == WB_LOG_WARN && strcmp(host_last_log, "config read 2") == 0, "log %d %s",
	      host_last_log_level, host_last_log);
	CHECK(host_progress_done == 1 && host_progress_total == 2 && strcmp(host_progress_msg, "half") == 0, "progress");

	/* wb_alloc refuses absurd sizes and frees a buffer the host never used. */
	CHECK(wb_alloc(UINT32_MAX) == NULL, "wb_alloc(4 GiB)");
	CHECK(wb_alloc(10) != NULL && wb_alloc(10) != NULL, "wb_alloc twice");
}

/* test_hostile_bytes feeds pseudo-random and mutated documents to the
 * parser: it must never crash (the sanitizers watch) and whatever it
 * accepts must write back to JSON that parses to the same text. */
static void test_hostile_bytes(void) {
	static const char seed[] = "{\"a\":[1,-2.5e3,true,false,null,\"x\\u00e9\\ud83d\\ude00\\n\"],\"b\":{\"c\":{}}}";
	uint32_t state = 12345;
	int accepted = 0, stable = 0;
	char buf[sizeof seed + 8];
	for (int round = 0; round < 20000; round++) {
		size_t n = sizeof seed - 1;
		memcpy(buf, seed, n);
		int edits = 1 + round % 4;
		for (int e = 0; e < edits; e++) {
			state = state * 1103515245u + 12345u;
			size_t at = (state >> 8) % n;
			state = state * 1103515245u + 12345u;
			buf[at] = (char)(state >> 16);
		}
		if (round % 7 == 0) {
			n = (state >> 4) % n; /* truncation */
		}
		wb_arena *a = wb_arena_new(0);
		const wb_json *v = wb_json_parse(a, buf, n, NULL);
		if (v) {
			accepted++;
			wb_jw w;
			wb_jw_init(&w, a, 0);
			wb_jw_value(&w, v);
			size_t len = 0;
			const char *out = wb_jw_finish(&w, &len);
			const char *again = out ? roundtrip(a, out, len) : NULL;
			if (again && strcmp(again, out) == 0) {
				stable++;
			}
		}
		wb_arena_free(a);
	}
	CHECK(accepted > 0 && stable == accepted, "hostile: %d accepted, %d stable", accepted, stable);
}

int main(void) {
	test_parse_valid();
	test_parse_invalid();
	test_depth_limit();
	test_accessors();
	test_writer();
	test_writer_misuse();
	test_arena();
	test_schema();
	test_manifest();
	test_dispatch();
	test_hostile_bytes();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
