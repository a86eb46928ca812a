/*
 * nerdgraph.h: a NerdGraph (New Relic's GraphQL API) client on top of the
 * Workbench C kit.
 */
#ifndef NEWRELIC_NERDGRAPH_H
#define NEWRELIC_NERDGRAPH_H

#include "workbench.h"

/* ng_query POSTs {"query": query, "variables": variables} to the NerdGraph
 * endpoint of the configured region (or the operator's base URL) and returns
 * the response's data object. Host failures, HTTP errors and a non-empty
 * GraphQL errors array become the call's error and NULL is returned.
 * variables is JSON object text or NULL. */
const wb_json *ng_query(wb_call *c, const char *query, const char *variables);

/* ng_endpoint returns the GraphQL URL for this call, or NULL with the error
 * recorded when the region setting is not US or EU. */
const char *ng_endpoint(wb_call *c);

/* ng_error_code maps one GraphQL error object to a tool error code. */
const char *ng_error_code(const wb_json *error, int http_status);

/* ng_nrql_string stores in *out s written as an NRQL string literal:
 * single-quoted, with quotes and backslashes escaped by a backslash. It
 * returns false when s holds a control character, which this plugin never
 * puts into a literal, or without memory. */
bool ng_nrql_string(wb_arena *a, char **out, const char *s);

#endif
