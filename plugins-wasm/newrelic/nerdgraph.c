/*
 * nerdgraph.c: the NerdGraph client (see nerdgraph.h).
 */
#include "nerdgraph.h"

#include <string.h>

#define ENDPOINT_US "https://api.newrelic.com/graphql"
#define ENDPOINT_EU "https://api.eu.newrelic.com/graphql"
#define USER_AGENT "workbench-newrelic-plugin/1.0.0"

static bool equal_fold(const char *a, const char *b) {
	for (; *a && *b; a++, b++) {
		char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
		char y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
		if (x != y) {
			return false;
		}
	}
	return *a == *b;
}

/* contains_fold reports whether needle occurs in hay, ignoring ASCII case. */
static bool contains_fold(const char *hay, const char *needle) {
	if (!hay) {
		return false;
	}
	size_t n = strlen(needle);
	for (; *hay; hay++) {
		size_t i = 0;
		for (; i < n && hay[i]; i++) {
			char x = hay[i] >= 'A' && hay[i] <= 'Z' ? (char)(hay[i] - 'A' + 'a') : hay[i];
			char y = needle[i] >= 'A' && needle[i] <= 'Z' ? (char)(needle[i] - 'A' + 'a') : needle[i];
			if (x != y) {
				break;
			}
		}
		if (i == n) {
			return true;
		}
	}
	return false;
}

const char *ng_endpoint(wb_call *c) {
	const char *base = wb_config(c, "base_url");
	if (base && *base) {
		size_t n = strlen(base);
		while (n && base[n - 1] == '/') {
			n--;
		}
		return wb_arena_printf(wb_call_arena(c), "%.*s/graphql", (int)n, base);
	}
	const char *region = wb_config(c, "region");
	if (!region || !*region || equal_fold(region, "US")) {
		return ENDPOINT_US;
	}
	if (equal_fold(region, "EU")) {
		return ENDPOINT_EU;
	}
	wb_fail(c, WB_TOOL_ERROR, "the region setting is %s; it must be US or EU", region);
	return NULL;
}

const char *ng_error_code(const wb_json *error, int http_status) {
	const char *message = wb_json_string(wb_json_get(error, "message"));
	const wb_json *ext = wb_json_get(error, "extensions");
	const char *cls = wb_json_string(wb_json_get(ext, "errorClass"));
	const char *code = wb_json_string(wb_json_get(ext, "error_code"));
	const char *gql_code = wb_json_string(wb_json_get(ext, "code"));
	if (http_status == 401 || (code && equal_fold(code, "BAD_API_KEY")) || (cls && equal_fold(cls, "UNAUTHORIZED")) ||
	    (gql_code && equal_fold(gql_code, "UNAUTHENTICATED")) || contains_fold(message, "unauthorized") ||
	    contains_fold(message, "invalid api key")) {
		return WB_UNAUTHORIZED;
	}
	if (http_status == 403 || (cls && (equal_fold(cls, "FORBIDDEN") || equal_fold(cls, "ACCESS_DENIED"))) ||
	    (gql_code && equal_fold(gql_code, "FORBIDDEN")) || contains_fold(message, "access denied")) {
		return WB_FORBIDDEN;
	}
	if (http_status == 429 || (cls && (equal_fold(cls, "TOO_MANY_REQUESTS") || equal_fold(cls, "RATE_LIMITED")))) {
		return WB_RATE_LIMITED;
	}
	if ((cls && (equal_fold(cls, "INVALID_INPUT") || equal_fold(cls, "BAD_USER_INPUT"))) ||
	    (gql_code && equal_fold(gql_code, "BAD_USER_INPUT")) || contains_fold(message, "nrql syntax error")) {
		return WB_INVALID_ARGUMENTS;
	}
	if (cls && equal_fold(cls, "NOT_FOUND")) {
		return WB_NOT_FOUND;
	}
	if (cls && equal_fold(cls, "TIMEOUT")) {
		return WB_UPSTREAM_TIMEOUT;
	}
	return WB_UPSTREAM_ERROR;
}

/* is_deprecation reports NerdGraph's deprecation notices, which come as
 * errors next to complete data and are not failures. */
static bool is_deprecation(const wb_json *error) {
	const char *message = wb_json_string(wb_json_get(error, "message"));
	return message && strncmp(message, "This field is deprecated!", 25) == 0;
}

/* fail_with_errors records the first real GraphQL error as the call's error,
 * with every error's message, path and class as details. */
static void fail_with_errors(wb_call *c, const wb_json *errors, int http_status) {
	const wb_json *first = NULL;
	wb_jw d;
	wb_jw_init(&d, wb_call_arena(c), 64 << 10);
	wb_jw_object(&d);
	wb_jw_key(&d, "errors");
	wb_jw_array(&d);
	for (const wb_json *e = errors->first; e; e = e->next) {
		if (is_deprecation(e)) {
			continue;
		}
		if (!first) {
			first = e;
		}
		wb_jw_object(&d);
		wb_jw_kv_value(&d, "message", wb_json_get(e, "message"));
		const wb_json *path = wb_json_get(e, "path");
		if (path) {
			wb_jw_kv_value(&d, "path", path);
		}
		const char *cls = wb_json_string(wb_json_path(e, "extensions.errorClass"));
		if (cls) {
			wb_jw_kv_string(&d, "errorClass", cls);
		}
		wb_jw_object_end(&d);
	}
	wb_jw_array_end(&d);
	if (http_status) {
		wb_jw_kv_int(&d, "status", http_status);
	}
	wb_jw_object_end(&d);
	const char *details = wb_jw_finish(&d, NULL);
	const char *message = wb_json_string(wb_json_get(first, "message"));
	wb_fail_details(c, ng_error_code(first, http_status), details, "NerdGraph: %s",
	                message ? message : "the request failed without a message");
}

/* real_errors returns the errors array when it holds anything but
 * deprecation notices. */
static const wb_json *real_errors(const wb_json *doc) {
	const wb_json *errors = wb_json_get(doc, "errors");
	if (!errors || errors->type != WB_JSON_ARRAY) {
		return NULL;
	}
	for (const wb_json *e = errors->first; e; e = e->next) {
		if (!is_deprecation(e)) {
			return errors;
		}
	}
	return NULL;
}

static const char *http_status_code(int status) {
	switch (status) {
	case 401: return WB_UNAUTHORIZED;
	case 403: return WB_FORBIDDEN;
	case 429: return WB_RATE_LIMITED;
	default: return status >= 500 ? WB_UPSTREAM_ERROR : WB_INVALID_ARGUMENTS;
	}
}

const wb_json *ng_query(wb_call *c, const char *query, const char *variables) {
	const char *url = ng_endpoint(c);
	if (!url) {
		return NULL;
	}
	wb_jw body;
	wb_jw_init(&body, wb_call_arena(c), 1 << 20);
	wb_jw_object(&body);
	wb_jw_kv_string(&body, "query", query);
	if (variables) {
		wb_jw_key(&body, "variables");
		wb_jw_raw(&body, variables, strlen(variables));
	}
	wb_jw_object_end(&body);
	size_t body_len = 0;
	const char *text = wb_jw_finish(&body, &body_len);
	if (!text) {
		wb_fail(c, WB_TOOL_ERROR, "could not encode the GraphQL request: %s", body.fail_reason);
		return NULL;
	}
	const wb_header headers[] = {
		{"Content-Type", "application/json"},
		{"Accept", "application/json"},
		{"User-Agent", USER_AGENT},
	};
	wb_http_request req = {
		.method = "POST",
		.url = url,
		.headers = headers,
		.header_count = WB_LEN(headers),
		.body = text,
		.body_len = body_len,
	};
	wb_http_response resp;
	if (!wb_http(c, &req, &resp)) {
		return NULL;
	}
	wb_json_error err = {0};
	const wb_json *doc = wb_json_parse(wb_call_arena(c), resp.body, resp.body_len, &err);
	if (resp.status < 200 || resp.status > 299) {
		const wb_json *errors = doc ? real_errors(doc) : NULL;
		if (errors) {
			fail_with_errors(c, errors, resp.status);
		} else if (resp.status == 429) {
			const char *retry = wb_http_header(&resp, "Retry-After");
			wb_fail(c, WB_RATE_LIMITED, "NerdGraph rate limit reached%s%s%s", retry ? "; retry after " : "",
			        retry ? retry : "", retry ? " seconds" : "");
		} else {
			wb_fail(c, http_status_code(resp.status), "NerdGraph returned HTTP status %d", resp.status);
		}
		return NULL;
	}
	if (!doc) {
		wb_fail(c, WB_UPSTREAM_ERROR, "NerdGraph returned a body that is not JSON: %s at offset %zu", err.message,
		        err.offset);
		return NULL;
	}
	const wb_json *errors = real_errors(doc);
	if (errors) {
		fail_with_errors(c, errors, 0);
		return NULL;
	}
	const wb_json *data = wb_json_get(doc, "data");
	if (!data || data->type != WB_JSON_OBJECT) {
		wb_fail(c, WB_UPSTREAM_ERROR, "NerdGraph returned no data");
		return NULL;
	}
	return data;
}

bool ng_nrql_string(wb_arena *a, char **out, const char *s) {
	size_t n = strlen(s), extra = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch < 0x20) {
			return false;
		}
		if (ch == '\'' || ch == '\\') {
			extra++;
		}
	}
	char *buf = wb_arena_alloc(a, n + extra + 3);
	if (!buf) {
		return false;
	}
	size_t j = 0;
	buf[j++] = '\'';
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\'' || s[i] == '\\') {
			buf[j++] = '\\';
		}
		buf[j++] = s[i];
	}
	buf[j++] = '\'';
	buf[j] = 0;
	*out = buf;
	return true;
}
