/*
 * newrelic.c: the New Relic integration. Its tools run NerdGraph (GraphQL)
 * queries and mutations: NRQL, entity search, alert issues and incidents,
 * dashboards, deployments (change tracking), accounts and the current user.
 *
 * The user's API key is attached by the host as the API-Key header; the
 * region setting chooses api.newrelic.com (US) or api.eu.newrelic.com (EU),
 * and an operator's base URL overrides both.
 */
#include "nerdgraph.h"

#include <string.h>

/* JSON turns JSON written as C tokens into a string literal, so schemas stay
 * readable. It does not expand macros inside (true and false would become 1
 * and 0), so shared properties are joined by string concatenation. */
#define JSON(...) #__VA_ARGS__

#define ACCOUNT_ID_PROP \
	JSON("account_id": {"type": "integer", "minimum": 1, "description": "The New Relic account ID."})
#define CURSOR_PROP \
	JSON("cursor": {"type": "string", "maxLength": 4096, "description": "nextCursor of the previous page; omit for the first page."})
#define WINDOW_PROPS \
	JSON("start_time_ms": {"type": "integer", "minimum": 0, "description": "Start of the time window, epoch milliseconds; requires end_time_ms."}, \
	     "end_time_ms": {"type": "integer", "minimum": 0, "description": "End of the time window, epoch milliseconds; requires start_time_ms."})

/* begin_object starts the result as an object. */
static wb_jw *begin_object(wb_call *c) {
	wb_jw *out = wb_result(c);
	wb_jw_object(out);
	return out;
}

/* variables starts a writer for GraphQL variables. */
static void variables_begin(wb_call *c, wb_jw *w) {
	wb_jw_init(w, wb_call_arena(c), 1 << 20);
	wb_jw_object(w);
}

static const char *variables_end(wb_call *c, wb_jw *w) {
	wb_jw_object_end(w);
	const char *text = wb_jw_finish(w, NULL);
	if (!text) {
		wb_fail(c, WB_TOOL_ERROR, "could not encode the GraphQL variables: %s", w->fail_reason);
	}
	return text;
}

/* time_window adds $timeWindow from start_time_ms and end_time_ms; both or
 * neither must be given. */
static bool time_window(wb_call *c, wb_jw *vars) {
	const wb_json *start = wb_arg(c, "start_time_ms"), *end = wb_arg(c, "end_time_ms");
	if (!start && !end) {
		return true;
	}
	int64_t s = wb_arg_int(c, "start_time_ms", -1), e = wb_arg_int(c, "end_time_ms", -1);
	if (!start || !end) {
		wb_fail(c, WB_INVALID_ARGUMENTS, "start_time_ms and end_time_ms go together: give both or neither");
		return false;
	}
	if (e <= s) {
		wb_fail(c, WB_INVALID_ARGUMENTS, "end_time_ms must be after start_time_ms");
		return false;
	}
	wb_jw_key(vars, "timeWindow");
	wb_jw_object(vars);
	wb_jw_kv_int(vars, "startTime", s);
	wb_jw_kv_int(vars, "endTime", e);
	wb_jw_object_end(vars);
	return true;
}

/* account_or_fail returns data.actor.account, or NULL with NOT_FOUND when
 * NerdGraph answered null for it. */
static const wb_json *account_or_fail(wb_call *c, const wb_json *data, int64_t id) {
	const wb_json *account = wb_json_path(data, "actor.account");
	if (!account || account->type != WB_JSON_OBJECT) {
		wb_fail(c, WB_NOT_FOUND, "account %lld was not found or is not accessible with this API key", (long long)id);
		return NULL;
	}
	return account;
}

/* next_cursor writes "next_cursor" from a result's nextCursor (null at the
 * last page). */
static void next_cursor(wb_jw *out, const wb_json *page) {
	wb_jw_kv_string(out, "next_cursor", wb_json_string(wb_json_get(page, "nextCursor")));
}

/* list_or_empty writes key as the array at v, or [] when it is null. */
static void list_or_empty(wb_jw *out, const char *key, const wb_json *v) {
	wb_jw_key(out, key);
	if (v && v->type == WB_JSON_ARRAY) {
		wb_jw_value(out, v);
	} else {
		wb_jw_array(out);
		wb_jw_array_end(out);
	}
}

/* ------------------------------------------------------------------------
 * NRQL
 * ------------------------------------------------------------------------ */

static const char nrql_query[] =
	"query RunNrql($accountId: Int!, $query: Nrql!, $timeout: Seconds) { actor { account(id: $accountId) { "
	"nrql(query: $query, timeout: $timeout) { results metadata { eventTypes facets timeWindow { begin end } } } } } }";

/* run_nrql runs query on account and returns the nrql object. */
static const wb_json *run_nrql(wb_call *c, int64_t account_id, const char *query, int64_t timeout) {
	wb_jw vars;
	variables_begin(c, &vars);
	wb_jw_kv_int(&vars, "accountId", account_id);
	wb_jw_kv_string(&vars, "query", query);
	if (timeout > 0) {
		wb_jw_kv_int(&vars, "timeout", timeout);
	}
	const char *v = variables_end(c, &vars);
	const wb_json *data = v ? ng_query(c, nrql_query, v) : NULL;
	const wb_json *account = data ? account_or_fail(c, data, account_id) : NULL;
	if (!account) {
		return NULL;
	}
	const wb_json *nrql = wb_json_get(account, "nrql");
	if (!nrql || nrql->type != WB_JSON_OBJECT) {
		wb_fail(c, WB_UPSTREAM_ERROR, "NerdGraph returned no NRQL result");
		return NULL;
	}
	return nrql;
}

static int tool_run_nrql(wb_call *c) {
	const char *query = wb_arg_string(c, "query", "");
	const wb_json *nrql = run_nrql(c, wb_arg_int(c, "account_id", 0), query, wb_arg_int(c, "timeout_seconds", 0));
	if (!nrql) {
		return WB_ERR;
	}
	wb_jw *out = begin_object(c);
	list_or_empty(out, "results", wb_json_get(nrql, "results"));
	wb_jw_kv_value(out, "metadata", wb_json_get(nrql, "metadata"));
	wb_jw_object_end(out);
	return WB_OK;
}

/* is_guid_text reports whether s looks like an entity GUID (base64 text). */
static bool is_guid_text(const char *s) {
	if (!*s) {
		return false;
	}
	for (; *s; s++) {
		char ch = *s;
		bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '+' ||
		          ch == '/' || ch == '=' || ch == '-' || ch == '_';
		if (!ok) {
			return false;
		}
	}
	return true;
}

static int tool_list_deployments(wb_call *c) {
	wb_arena *a = wb_call_arena(c);
	const char *app = wb_arg_string(c, "app_name", NULL);
	const char *guid = wb_arg_string(c, "entity_guid", NULL);
	char *where = "";
	if (app) {
		char *lit;
		if (!ng_nrql_string(a, &lit, app)) {
			return wb_fail(c, WB_INVALID_ARGUMENTS, "app_name must not contain control characters");
		}
		where = wb_arena_printf(a, " WHERE appName = %s", lit);
	}
	if (guid) {
		if (!is_guid_text(guid)) {
			return wb_fail(c, WB_INVALID_ARGUMENTS, "entity_guid %s is not an entity GUID", guid);
		}
		where = wb_arena_printf(a, "%s %s entity.guid = '%s'", where, app ? "AND" : "WHERE", guid);
	}
	int64_t days = wb_arg_int(c, "since_days", 7), limit = wb_arg_int(c, "limit", 100);
	const char *query = wb_arena_printf(a, "SELECT * FROM Deployment%s SINCE %lld days ago LIMIT %lld", where,
	                                    (long long)days, (long long)limit);
	if (!query) {
		return wb_fail(c, WB_TOOL_ERROR, "out of memory");
	}
	const wb_json *nrql = run_nrql(c, wb_arg_int(c, "account_id", 0), query, 0);
	if (!nrql) {
		return WB_ERR;
	}
	wb_jw *out = begin_object(c);
	list_or_empty(out, "deployments", wb_json_get(nrql, "results"));
	wb_jw_kv_string(out, "nrql", query);
	wb_jw_object_end(out);
	return WB_OK;
}

/* ------------------------------------------------------------------------
 * Entities and dashboards
 * ------------------------------------------------------------------------ */

#define ENTITY_FIELDS "guid name entityType domain type accountId reporting alertSeverity permalink tags { key values }"

static const char entity_search_query[] =
	"query SearchEntities($query: String!, $cursor: String) { actor { entitySearch(query: $query) { count "
	"results(cursor: $cursor) { nextCursor entities { " ENTITY_FIELDS " } } } } }";

static const char dashboard_search_query[] =
	"query SearchDashboards($builder: EntitySearchQueryBuilder, $cursor: String) { actor { "
	"entitySearch(queryBuilder: $builder) { count results(cursor: $cursor) { nextCursor entities { "
	"guid name accountId permalink tags { key values } "
	"... on DashboardEntityOutline { createdAt updatedAt dashboardParentGuid owner { email userId } } } } } } }";

/* write_search writes count, entities and next_cursor of an entitySearch. */
static int write_search(wb_call *c, const wb_json *data, const char *list_key) {
	const wb_json *search = wb_json_path(data, "actor.entitySearch");
	if (!search || search->type != WB_JSON_OBJECT) {
		return wb_fail(c, WB_UPSTREAM_ERROR, "NerdGraph returned no entity search result");
	}
	const wb_json *page = wb_json_get(search, "results");
	wb_jw *out = begin_object(c);
	wb_jw_kv_value(out, "count", wb_json_get(search, "count"));
	list_or_empty(out, list_key, wb_json_get(page, "entities"));
	next_cursor(out, page);
	wb_jw_object_end(out);
	return WB_OK;
}

static int tool_list_entities(wb_call *c) {
	wb_jw vars;
	variables_begin(c, &vars);
	wb_jw_kv_string(&vars, "query", wb_arg_string(c, "query", ""));
	wb_jw_kv_string(&vars, "cursor", wb_arg_string(c, "cursor", NULL));
	const char *v = variables_end(c, &vars);
	const wb_json *data = v ? ng_query(c, entity_search_query, v) : NULL;
	return data ? write_search(c, data, "entities") : WB_ERR;
}

static int tool_list_dashboards(wb_call *c) {
	wb_jw vars;
	variables_begin(c, &vars);
	wb_jw_key(&vars, "builder");
	wb_jw_object(&vars);
	wb_jw_kv_string(&vars, "type", "DASHBOARD");
	const char *name = wb_arg_string(c, "name", NULL);
	if (name) {
		wb_jw_kv_string(&vars, "name", name);
	}
	wb_jw_object_end(&vars);
	wb_jw_kv_string(&vars, "cursor", wb_arg_string(c, "cursor", NULL));
	const char *v = variables_end(c, &vars);
	const wb_json *data = v ? ng_query(c, dashboard_search_query, v) : NULL;
	return data ? write_search(c, data, "dashboards") : WB_ERR;
}

static const char entity_query[] =
	"query GetEntity($guid: EntityGuid!) { actor { entity(guid: $guid) { " ENTITY_FIELDS " } } }";

static int tool_get_entity(wb_call *c) {
	const char *guid = wb_arg_string(c, "guid", "");
	if (!is_guid_text(guid)) {
		return wb_fail(c, WB_INVALID_ARGUMENTS, "guid %s is not an entity GUID", guid);
	}
	wb_jw vars;
	variables_begin(c, &vars);
	wb_jw_kv_string(&vars, "guid", guid);
	const char *v = variables_end(c, &vars);
	const wb_json *data = v ? ng_query(c, entity_query, v) : NULL;
	if (!data) {
		return WB_ERR;
	}
	const wb_json *entity = wb_json_path(data, "actor.entity");
	if (!entity || entity->type != WB_JSON_OBJECT) {
		return wb_fail(c, WB_NOT_FOUND, "no entity with guid %s is visible with this API key", guid);
	}
	wb_jw_value(wb_result(c), entity);
	return WB_OK;
}

/* ------------------------------------------------------------------------
 * Alerts: issues and incidents
 * ------------------------------------------------------------------------ */

static const char issues_query[] =
	"query ListIssues($accountId: Int!, $cursor: String, $filter: AiIssuesFilterIssues, "
	"$timeWindow: AiIssuesTimeWindowInput) { actor { account(id: $accountId) { aiIssues { "
	"issues(cursor: $cursor, filter: $filter, timeWindow: $timeWindow) { nextCursor issues { "
	"issueId title priority state sources entityGuids entityNames conditionName policyName "
	"createdAt activatedAt closedAt updatedAt totalIncidents } } } } } }";

static const char incidents_query[] =
	"query ListIncidents($accountId: Int!, $cursor: String, $timeWindow: AiIssuesTimeWindowInput) { actor { "
	"account(id: $accountId) { aiIssues { incidents(cursor: $cursor, timeWindow: $timeWindow) { nextCursor "
	"incidents { incidentId title description priority state entityGuids entityNames createdAt closedAt "
	"updatedAt } } } } } }";

/* list_ai writes one page of aiIssues.<field>.<field>. */
static int list_ai(wb_call *c, const char *query, const char *field, bool with_states) {
	int64_t account_id = wb_arg_int(c, "account_id", 0);
	wb_jw vars;
	variables_begin(c, &vars);
	wb_jw_kv_int(&vars, "accountId", account_id);
	wb_jw_kv_string(&vars, "cursor", wb_arg_string(c, "cursor", NULL));
	const wb_json *states = wb_arg(c, "states");
	if (with_states && states && states->len > 0) {
		wb_jw_key(&vars, "filter");
		wb_jw_object(&vars);
		wb_jw_kv_value(&vars, "states", states);
		wb_jw_object_end(&vars);
	}
	if (!time_window(c, &vars)) {
		return WB_ERR;
	}
	const char *v = variables_end(c, &vars);
	const wb_json *data = v ? ng_query(c, query, v) : NULL;
	const wb_json *account = data ? account_or_fail(c, data, account_id) : NULL;
	if (!account) {
		return WB_ERR;
	}
	const wb_json *page = wb_json_get(wb_json_get(account, "aiIssues"), field);
	wb_jw *out = begin_object(c);
	list_or_empty(out, field, wb_json_get(page, field));
	next_cursor(out, page);
	wb_jw_object_end(out);
	return WB_OK;
}

static int tool_list_issues(wb_call *c) { return list_ai(c, issues_query, "issues", true); }

static int tool_list_incidents(wb_call *c) { return list_ai(c, incidents_query, "incidents", false); }

/* ------------------------------------------------------------------------
 * Accounts and the user
 * ------------------------------------------------------------------------ */

static int tool_list_accounts(wb_call *c) {
	const wb_json *data = ng_query(c, "query ListAccounts { actor { accounts { id name } } }", NULL);
	if (!data) {
		return WB_ERR;
	}
	wb_jw *out = begin_object(c);
	list_or_empty(out, "accounts", wb_json_path(data, "actor.accounts"));
	wb_jw_object_end(out);
	return WB_OK;
}

static int tool_get_current_user(wb_call *c) {
	const wb_json *data = ng_query(c, "query CurrentUser { actor { user { id name email } } }", NULL);
	if (!data) {
		return WB_ERR;
	}
	const wb_json *user = wb_json_path(data, "actor.user");
	if (!user || user->type != WB_JSON_OBJECT) {
		return wb_fail(c, WB_UNAUTHORIZED, "NerdGraph returned no user for this API key");
	}
	wb_jw_value(wb_result(c), user);
	return WB_OK;
}

/* ------------------------------------------------------------------------
 * Mutations
 * ------------------------------------------------------------------------ */

static const char create_deployment_mutation[] =
	"mutation RecordDeployment($deployment: ChangeTrackingDeploymentInput!) { "
	"changeTrackingCreateDeployment(deployment: $deployment) { deploymentId entityGuid timestamp version "
	"changelog commit description user deploymentType } }";

static int tool_record_deployment(wb_call *c) {
	const char *guid = wb_arg_string(c, "entity_guid", "");
	if (!is_guid_text(guid)) {
		return wb_fail(c, WB_INVALID_ARGUMENTS, "entity_guid %s is not an entity GUID", guid);
	}
	static const struct {
		const char *arg, *field;
	} optional[] = {
		{"changelog", "changelog"}, {"commit", "commit"}, {"description", "description"},
		{"user", "user"}, {"deployment_type", "deploymentType"}, {"deep_link", "deepLink"},
	};
	wb_jw vars;
	variables_begin(c, &vars);
	wb_jw_key(&vars, "deployment");
	wb_jw_object(&vars);
	wb_jw_kv_string(&vars, "entityGuid", guid);
	wb_jw_kv_string(&vars, "version", wb_arg_string(c, "version", ""));
	for (size_t i = 0; i < WB_LEN(optional); i++) {
		const char *value = wb_arg_string(c, optional[i].arg, NULL);
		if (value) {
			wb_jw_kv_string(&vars, optional[i].field, value);
		}
	}
	if (wb_arg(c, "timestamp_ms")) {
		wb_jw_kv_int(&vars, "timestamp", wb_arg_int(c, "timestamp_ms", 0));
	}
	wb_jw_object_end(&vars);
	const char *v = variables_end(c, &vars);
	const wb_json *data = v ? ng_query(c, create_deployment_mutation, v) : NULL;
	if (!data) {
		return WB_ERR;
	}
	const wb_json *created = wb_json_get(data, "changeTrackingCreateDeployment");
	if (!created || created->type != WB_JSON_OBJECT) {
		return wb_fail(c, WB_UPSTREAM_ERROR, "NerdGraph did not return the new deployment");
	}
	wb_jw_value(wb_result(c), created);
	return WB_OK;
}

static const char delete_tags_mutation[] =
	"mutation DeleteTags($guid: EntityGuid!, $tagKeys: [String!]!) { "
	"taggingDeleteTagFromEntity(guid: $guid, tagKeys: $tagKeys) { errors { message type } } }";

/* tagging_error_code maps a TaggingMutationErrorType. */
static const char *tagging_error_code(const char *type) {
	if (!type) {
		return WB_UPSTREAM_ERROR;
	}
	if (!strcmp(type, "NOT_FOUND")) {
		return WB_NOT_FOUND;
	}
	if (!strcmp(type, "FORBIDDEN") || !strcmp(type, "NOT_PERMITTED")) {
		return WB_FORBIDDEN;
	}
	if (!strcmp(type, "INVALID_ENTITY_GUID") || !strcmp(type, "INVALID_DOMAIN_TYPE") ||
	    !strncmp(type, "TOO_MANY_", 9)) {
		return WB_INVALID_ARGUMENTS;
	}
	return WB_UPSTREAM_ERROR;
}

static int tool_delete_entity_tags(wb_call *c) {
	const char *guid = wb_arg_string(c, "guid", "");
	if (!is_guid_text(guid)) {
		return wb_fail(c, WB_INVALID_ARGUMENTS, "guid %s is not an entity GUID", guid);
	}
	wb_jw vars;
	variables_begin(c, &vars);
	wb_jw_kv_string(&vars, "guid", guid);
	wb_jw_kv_value(&vars, "tagKeys", wb_arg(c, "tag_keys"));
	const char *v = variables_end(c, &vars);
	const wb_json *data = v ? ng_query(c, delete_tags_mutation, v) : NULL;
	if (!data) {
		return WB_ERR;
	}
	const wb_json *errors = wb_json_path(data, "taggingDeleteTagFromEntity.errors");
	bool delayed = false;
	for (const wb_json *e = errors ? errors->first : NULL; e; e = e->next) {
		const char *type = wb_json_string(wb_json_get(e, "type"));
		if (type && !strcmp(type, "UPDATE_WILL_BE_DELAYED")) {
			delayed = true;
			continue;
		}
		const char *message = wb_json_string(wb_json_get(e, "message"));
		wb_jw d;
		wb_jw_init(&d, wb_call_arena(c), 4096);
		wb_jw_object(&d);
		wb_jw_kv_string(&d, "type", type);
		wb_jw_object_end(&d);
		return wb_fail_details(c, tagging_error_code(type), wb_jw_finish(&d, NULL), "NerdGraph: %s",
		                       message ? message : "deleting the tags failed");
	}
	wb_jw *out = begin_object(c);
	wb_jw_kv_string(out, "guid", guid);
	wb_jw_kv_value(out, "deleted", wb_arg(c, "tag_keys"));
	wb_jw_kv_bool(out, "delayed", delayed);
	wb_jw_object_end(out);
	return WB_OK;
}

/* ------------------------------------------------------------------------
 * Declarations
 * ------------------------------------------------------------------------ */

#define PAGE_OUTPUT(list) \
	JSON({"type": "object", "properties": {list: {"type": "array", "items": {"type": "object"}}, \
	      "next_cursor": {"type": ["string", "null"]}}, "required": [list, "next_cursor"]})

static const wb_tool_def tools[] = {
	{
		.slug = "newrelic_run_nrql",
		.title = "Run an NRQL query",
		.description = "Runs an NRQL query (New Relic Query Language) on one account through NerdGraph and returns "
		               "its result rows and metadata. Example: SELECT count(*) FROM Transaction SINCE 1 hour ago.",
		.input_schema = JSON({"type": "object", "properties": {) ACCOUNT_ID_PROP JSON(,
			"query": {"type": "string", "minLength": 1, "maxLength": 4096, "description": "The NRQL query."},
			"timeout_seconds": {"type": "integer", "minimum": 1, "maximum": 120, "description": "Query timeout; NerdGraph's default when omitted."}},
			"required": ["account_id", "query"], "additionalProperties": false}),
		.output_schema = JSON({"type": "object", "properties": {"results": {"type": "array"}, "metadata": {"type": ["object", "null"]}},
			"required": ["results"]}),
		.annotations = WB_READ_ONLY | WB_IDEMPOTENT | WB_OPEN_WORLD,
		.fn = tool_run_nrql,
	},
	{
		.slug = "newrelic_list_entities",
		.title = "Search entities",
		.description = "Searches monitored entities (services, hosts, browser apps, dashboards, ...) with an entity "
		               "search query such as domain = 'APM' AND name LIKE 'checkout'. One page per call; pass "
		               "next_cursor back as cursor for the next page.",
		.input_schema = JSON({"type": "object", "properties": {
			"query": {"type": "string", "minLength": 1, "maxLength": 4096, "description": "Entity search query."},
			) CURSOR_PROP JSON(}, "required": ["query"], "additionalProperties": false}),
		.output_schema = PAGE_OUTPUT("entities"),
		.annotations = WB_READ_ONLY | WB_IDEMPOTENT | WB_OPEN_WORLD,
		.fn = tool_list_entities,
	},
	{
		.slug = "newrelic_get_entity",
		.title = "Get an entity",
		.description = "Returns one entity by its GUID: name, type, domain, account, reporting status, alert severity, "
		               "permalink and tags.",
		.input_schema = JSON({"type": "object", "properties": {
			"guid": {"type": "string", "minLength": 1, "maxLength": 256, "description": "The entity GUID."}},
			"required": ["guid"], "additionalProperties": false}),
		.output_schema = JSON({"type": "object", "properties": {"guid": {"type": "string"}, "name": {"type": "string"}}}),
		.annotations = WB_READ_ONLY | WB_IDEMPOTENT | WB_OPEN_WORLD,
		.fn = tool_get_entity,
	},
	{
		.slug = "newrelic_list_issues",
		.title = "List alert issues",
		.description = "Lists alert issues of an account (the grouped form of incidents), newest first, optionally "
		               "filtered by state and time window. One page per call; pass next_cursor back as cursor.",
		.input_schema = JSON({"type": "object", "properties": {) ACCOUNT_ID_PROP JSON(,
			"states": {"type": "array", "maxItems": 4, "items": {"type": "string", "enum": ["CREATED", "ACTIVATED", "DEACTIVATED", "CLOSED"]},
			           "description": "Only issues in these states."},
			) CURSOR_PROP "," WINDOW_PROPS JSON(}, "required": ["account_id"], "additionalProperties": false}),
		.output_schema = PAGE_OUTPUT("issues"),
		.annotations = WB_READ_ONLY | WB_IDEMPOTENT | WB_OPEN_WORLD,
		.fn = tool_list_issues,
	},
	{
		.slug = "newrelic_list_incidents",
		.title = "List alert incidents",
		.description = "Lists alert incidents of an account, optionally within a time window. One page per call; pass "
		               "next_cursor back as cursor.",
		.input_schema = JSON({"type": "object", "properties": {) ACCOUNT_ID_PROP "," CURSOR_PROP "," WINDOW_PROPS
			JSON(}, "required": ["account_id"], "additionalProperties": false}),
		.output_schema = PAGE_OUTPUT("incidents"),
		.annotations = WB_READ_ONLY | WB_IDEMPOTENT | WB_OPEN_WORLD,
		.fn = tool_list_incidents,
	},
	{
		.slug = "newrelic_list_dashboards",
		.title = "List dashboards",
		.description = "Lists dashboards visible to the API key, optionally those whose name contains a text. One page "
		               "per call; pass next_cursor back as cursor.",
		.input_schema = JSON({"type": "object", "properties": {
			"name": {"type": "string", "minLength": 1, "maxLength": 256, "description": "Only dashboards whose name contains this."},
			) CURSOR_PROP JSON(}, "additionalProperties": false}),
		.output_schema = PAGE_OUTPUT("dashboards"),
		.annotations = WB_READ_ONLY | WB_IDEMPOTENT | WB_OPEN_WORLD,
		.fn = tool_list_dashboards,
	},
	{
		.slug = "newrelic_list_deployments",
		.title = "List deployments",
		.description = "Lists recorded deployments (change tracking) of an account from the Deployment event type, "
		               "optionally for one application name or entity GUID. Returns the rows and the NRQL it ran.",
		.input_schema = JSON({"type": "object", "properties": {) ACCOUNT_ID_PROP JSON(,
			"app_name": {"type": "string", "minLength": 1, "maxLength": 256, "description": "Only deployments of this application name."},
			"entity_guid": {"type": "string", "minLength": 1, "maxLength": 256, "description": "Only deployments of this entity."},
			"since_days": {"type": "integer", "minimum": 1, "maximum": 90, "default": 7, "description": "How many days back."},
			"limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100, "description": "At most this many rows."}},
			"required": ["account_id"], "additionalProperties": false}),
		.output_schema = JSON({"type": "object", "properties": {"deployments": {"type": "array"}, "nrql": {"type": "string"}},
			"required": ["deployments", "nrql"]}),
		.annotations = WB_READ_ONLY | WB_IDEMPOTENT | WB_OPEN_WORLD,
		.fn = tool_list_deployments,
	},
	{
		.slug = "newrelic_list_accounts",
		.title = "List accounts",
		.description = "Lists the New Relic accounts the API key can access, with their IDs and names.",
		.input_schema = JSON({"type": "object", "properties": {}, "additionalProperties": false}),
		.output_schema = JSON({"type": "object", "properties": {"accounts": {"type": "array"}}, "required": ["accounts"]}),
		.annotations = WB_READ_ONLY | WB_IDEMPOTENT | WB_OPEN_WORLD,
		.fn = tool_list_accounts,
	},
	{
		.slug = "newrelic_get_current_user",
		.title = "Get the current user",
		.description = "Returns the user the API key belongs to: ID, name and email.",
		.input_schema = JSON({"type": "object", "properties": {}, "additionalProperties": false}),
		.output_schema = JSON({"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "email": {"type": "string"}}}),
		.annotations = WB_READ_ONLY | WB_IDEMPOTENT | WB_OPEN_WORLD,
		.fn = tool_get_current_user,
	},
	{
		.slug = "newrelic_record_deployment",
		.title = "Record a deployment",
		.description = "Records a deployment of an entity with change tracking, so it shows on the entity's charts "
		               "and in the Deployment event type.",
		.input_schema = JSON({"type": "object", "properties": {
			"entity_guid": {"type": "string", "minLength": 1, "maxLength": 256, "description": "The deployed entity."},
			"version": {"type": "string", "minLength": 1, "maxLength": 256, "description": "The deployed version."},
			"changelog": {"type": "string", "maxLength": 4096},
			"commit": {"type": "string", "maxLength": 256},
			"description": {"type": "string", "maxLength": 4096},
			"user": {"type": "string", "maxLength": 256},
			"deep_link": {"type": "string", "maxLength": 2048},
			"deployment_type": {"type": "string", "enum": ["BASIC", "BLUE_GREEN", "CANARY", "OTHER", "ROLLING", "SHADOW"]},
			"timestamp_ms": {"type": "integer", "minimum": 0, "description": "When it happened, epoch milliseconds; now when omitted."}},
			"required": ["entity_guid", "version"], "additionalProperties": false}),
		.output_schema = JSON({"type": "object", "properties": {"deploymentId": {"type": "string"}, "entityGuid": {"type": "string"}}}),
		.annotations = WB_OPEN_WORLD,
		.fn = tool_record_deployment,
	},
	{
		.slug = "newrelic_delete_entity_tags",
		.title = "Delete entity tags",
		.description = "Deletes tags (every value of each given key) from an entity.",
		.input_schema = JSON({"type": "object", "properties": {
			"guid": {"type": "string", "minLength": 1, "maxLength": 256, "description": "The entity GUID."},
			"tag_keys": {"type": "array", "minItems": 1, "maxItems": 50, "items": {"type": "string", "minLength": 1, "maxLength": 128}}},
			"required": ["guid", "tag_keys"], "additionalProperties": false}),
		.output_schema = JSON({"type": "object", "properties": {"guid": {"type": "string"}, "deleted": {"type": "array"}, "delayed": {"type": "boolean"}}}),
		.annotations = WB_DESTRUCTIVE | WB_IDEMPOTENT | WB_OPEN_WORLD,
		.fn = tool_delete_entity_tags,
	},
};

static const wb_apikey_field fields[] = {{
	.name = "api_key",
	.label = "User API key",
	.secret = true,
	.required = true,
	.pattern = "^NRAK-[A-Za-z0-9]+$",
	.placeholder = "NRAK-...",
}};

static const char *const regions[] = {"US", "EU", NULL};

static const wb_setting settings[] = {{
	.name = "region",
	.description = "Data center region of the New Relic accounts: US (api.newrelic.com) or EU (api.eu.newrelic.com).",
	.enum_values = regions,
	.default_value = "US",
}};

static const char *const hosts[] = {"api.newrelic.com", "api.eu.newrelic.com", NULL};
static const char *const categories[] = {"observability", "monitoring", NULL};

static const wb_plugin_def plugin = {
	.name = "newrelic",
	.version = "1.0.0",
	.title = "New Relic",
	.description = "New Relic observability through NerdGraph: NRQL queries, entities, alert issues and incidents, "
	               "dashboards and deployments.",
	.categories = categories,
	.hosts = hosts,
	.auth = {
		.mode = "apikey",
		.fields = fields,
		.field_count = WB_LEN(fields),
		.placement_in = "header",
		.placement_name = "API-Key",
		.placement_value = "{api_key}",
	},
	.settings = settings,
	.setting_count = WB_LEN(settings),
	.limits = {.memory_pages = 1024},
	.tools = tools,
	.tool_count = WB_LEN(tools),
};

WB_PLUGIN(plugin)
WB_EXPORT_TOOL(newrelic_run_nrql)
WB_EXPORT_TOOL(newrelic_list_entities)
WB_EXPORT_TOOL(newrelic_get_entity)
WB_EXPORT_TOOL(newrelic_list_issues)
WB_EXPORT_TOOL(newrelic_list_incidents)
WB_EXPORT_TOOL(newrelic_list_dashboards)
WB_EXPORT_TOOL(newrelic_list_deployments)
WB_EXPORT_TOOL(newrelic_list_accounts)
WB_EXPORT_TOOL(newrelic_get_current_user)
WB_EXPORT_TOOL(newrelic_record_deployment)
WB_EXPORT_TOOL(newrelic_delete_entity_tags)
