/*
 * conformance.c: the ABI conformance plugin of the C kit (integration
 * conf-c). Every language's kit ships the same six tools with the same
 * behaviour, so one test can compare them.
 */
#include "../workbench.h"

static int echo(wb_call *c) {
	wb_jw_value(wb_result(c), wb_input(c));
	return WB_OK;
}

static int fail(wb_call *c) {
	return wb_fail_details(c, WB_NOT_FOUND, "{\"id\":7}", "nothing here");
}

static int config(wb_call *c) {
	const char *value = wb_config(c, wb_arg_string(c, "key", ""));
	wb_jw *out = wb_result(c);
	wb_jw_object(out);
	wb_jw_kv_string(out, "value", value); /* NULL becomes null */
	wb_jw_object_end(out);
	return WB_OK;
}

static int http(wb_call *c) {
	wb_http_request req = {.method = "GET", .url = wb_arg_string(c, "url", "")};
	wb_http_response resp;
	if (!wb_http(c, &req, &resp)) {
		return WB_ERR; /* the host's error, code and message unchanged */
	}
	wb_jw *out = wb_result(c);
	wb_jw_object(out);
	wb_jw_kv_int(out, "status", resp.status);
	wb_jw_key(out, "body");
	wb_jw_stringn(out, resp.body, resp.body_len);
	wb_jw_object_end(out);
	return WB_OK;
}

static int log_hello(wb_call *c) {
	(void)c;
	wb_log(WB_LOG_INFO, "hello from c");
	return WB_OK;
}

static int progress(wb_call *c) {
	(void)c;
	wb_progress(1, 2, "half");
	wb_progress(2, 2, "done");
	return WB_OK;
}

static const wb_tool_def tools[] = {
	{
		.slug = "conf_c_echo",
		.description = "Returns its input object unchanged.",
		.input_schema = "{\"type\":\"object\"}",
		.annotations = WB_READ_ONLY | WB_IDEMPOTENT,
		.fn = echo,
	},
	{
		.slug = "conf_c_fail",
		.description = "Always fails with NOT_FOUND, message \"nothing here\" and details {\"id\":7}.",
		.input_schema = "{\"type\":\"object\"}",
		.annotations = WB_READ_ONLY | WB_IDEMPOTENT,
		.fn = fail,
	},
	{
		.slug = "conf_c_config",
		.description = "Returns the value of a setting read with config_get, or null.",
		.input_schema = "{\"type\":\"object\",\"properties\":{\"key\":{\"type\":\"string\"}},\"required\":[\"key\"]}",
		.annotations = WB_READ_ONLY | WB_IDEMPOTENT,
		.fn = config,
	},
	{
		.slug = "conf_c_http",
		.description = "GETs a URL and returns the status and the body as text.",
		.input_schema = "{\"type\":\"object\",\"properties\":{\"url\":{\"type\":\"string\"}},\"required\":[\"url\"]}",
		.annotations = WB_READ_ONLY | WB_OPEN_WORLD,
		.fn = http,
	},
	{
		.slug = "conf_c_log",
		.description = "Logs \"hello from c\" at info level and returns {}.",
		.input_schema = "{\"type\":\"object\"}",
		.annotations = WB_READ_ONLY | WB_IDEMPOTENT,
		.fn = log_hello,
	},
	{
		.slug = "conf_c_progress",
		.description = "Reports progress 1/2 \"half\" and 2/2 \"done\", then returns {}.",
		.input_schema = "{\"type\":\"object\"}",
		.annotations = WB_READ_ONLY | WB_IDEMPOTENT,
		.fn = progress,
	},
};

static const wb_plugin_def plugin = {
	.name = "conf-c",
	.version = "1.0.0",
	.title = "C conformance",
	.description = "ABI conformance plugin of the C plugin kit.",
	.auth = {.mode = "none"},
	.tools = tools,
	.tool_count = WB_LEN(tools),
};

WB_PLUGIN(plugin)
WB_EXPORT_TOOL(conf_c_echo)
WB_EXPORT_TOOL(conf_c_fail)
WB_EXPORT_TOOL(conf_c_config)
WB_EXPORT_TOOL(conf_c_http)
WB_EXPORT_TOOL(conf_c_log)
WB_EXPORT_TOOL(conf_c_progress)
