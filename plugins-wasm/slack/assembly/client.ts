// Calls to the Slack Web API (https://slack.com/api/<method>) and the
// mapping of Slack's answers to tool results. Slack answers most failures
// with HTTP 200 and {"ok": false, "error": "<code>"}; those become tool
// errors with precise codes, Slack's own code in details.slack_error.

import {
  JSONValue,
  Form,
  Request,
  Result,
  ToolError,
  Code,
  HTTPResult,
  send,
  baseURL,
  withQuery,
  fail,
  failWith,
} from "@workbench/pdk-assemblyscript";

/** USER_AGENT identifies the plugin to Slack. */
export const USER_AGENT = "workbench-slack-plugin/0.1.0";

/** REQUEST_TIMEOUT_MS bounds one Slack request. */
const REQUEST_TIMEOUT_MS: i32 = 20000;

/** SlackCall is Slack's answer to one method call: its data, or a tool error. */
export class SlackCall {
  data: JSONValue = JSONValue.object();
  error: Result | null = null;

  get failed(): bool {
    return this.error != null;
  }
}

/** methodURL is the URL of a Web API method under the effective base URL. */
export function methodURL(method: string): string {
  return baseURL() + "/" + method;
}

/** get calls a read method with its arguments in the query string, as Slack documents for GET. */
export function get(method: string, args: Form): SlackCall {
  const req = Request.get(withQuery(methodURL(method), args));
  return call(method, req);
}

/** postForm calls a method with an application/x-www-form-urlencoded body. */
export function postForm(method: string, args: Form): SlackCall {
  const req = Request.post(methodURL(method)).form(args);
  return call(method, req);
}

/** postJSON calls a write method with a JSON body (application/json; charset=utf-8). */
export function postJSON(method: string, body: JSONValue): SlackCall {
  const req = Request.post(methodURL(method)).json(body);
  return call(method, req);
}

function call(method: string, req: Request): SlackCall {
  req.header("User-Agent", USER_AGENT);
  req.timeoutMs = REQUEST_TIMEOUT_MS;
  return interpret(method, send(req));
}

/** interpret turns the host's answer to a method call into data or a tool error. */
export function interpret(method: string, r: HTTPResult): SlackCall {
  const out = new SlackCall();
  const hostErr = r.error;
  if (hostErr != null) {
    out.error = failWith(hostErr); // EGRESS_DENIED, NOT_CONNECTED, ...: passed on unchanged
    return out;
  }
  const resp = r.response!;
  if (resp.status == 429) {
    out.error = rateLimited(method, resp.headers.get("Retry-After"));
    return out;
  }
  const parsed = resp.json();
  if (!parsed.ok || !parsed.value!.isObject) {
    const d = JSONValue.object().setString("method", method).setInteger("status", resp.status);
    const why = resp.ok ? "an answer that is not a JSON object" : "HTTP " + resp.status.toString();
    out.error = fail(Code.UPSTREAM_ERROR, "Slack " + method + " returned " + why, d);
    return out;
  }
  const body = parsed.value!;
  if (!body.getBool("ok")) {
    out.error = slackError(method, body, resp.headers.get("Retry-After"));
    return out;
  }
  if (!resp.ok) {
    const d = JSONValue.object().setString("method", method).setInteger("status", resp.status);
    out.error = fail(Code.UPSTREAM_ERROR, "Slack " + method + " returned HTTP " + resp.status.toString(), d);
    return out;
  }
  out.data = body;
  return out;
}

function rateLimited(method: string, retryAfter: string): Result {
  const d = JSONValue.object().setString("method", method).setString("slack_error", "ratelimited");
  let msg = "Slack rate limited " + method;
  const secs = parseSeconds(retryAfter);
  if (secs >= 0) {
    d.setInteger("retry_after", secs);
    msg += "; retry after " + secs.toString() + " s";
  }
  return fail(Code.RATE_LIMITED, msg, d);
}

/** parseSeconds reads a Retry-After value in seconds; -1 when it is not a small number. */
export function parseSeconds(s: string): i64 {
  const t = s.trim();
  if (t.length == 0 || t.length > 9) return -1;
  let n: i64 = 0;
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return -1;
    n = n * 10 + <i64>(c - 0x30);
  }
  return n;
}

/** codeFor maps one of Slack's error strings to a tool error code. */
export function codeFor(slackError: string): string {
  if (
    slackError == "channel_not_found" ||
    slackError == "user_not_found" ||
    slackError == "users_not_found" ||
    slackError == "message_not_found" ||
    slackError == "thread_not_found" ||
    slackError == "file_not_found" ||
    slackError == "no_reaction"
  ) {
    return Code.NOT_FOUND;
  }
  if (
    slackError == "not_authed" ||
    slackError == "invalid_auth" ||
    slackError == "token_revoked" ||
    slackError == "token_expired" ||
    slackError == "account_inactive"
  ) {
    return Code.UNAUTHORIZED;
  }
  if (slackError == "missing_scope") return Code.FORBIDDEN;
  if (slackError == "ratelimited" || slackError == "rate_limited") return Code.RATE_LIMITED;
  if (
    slackError == "invalid_arguments" ||
    slackError == "invalid_cursor" ||
    slackError == "invalid_limit" ||
    slackError == "invalid_ts_latest" ||
    slackError == "invalid_ts_oldest" ||
    slackError == "invalid_blocks" ||
    slackError == "invalid_name" ||
    slackError == "no_text" ||
    slackError == "msg_too_long"
  ) {
    return Code.INVALID_ARGUMENTS;
  }
  return Code.UPSTREAM_ERROR;
}

/** slackError builds the tool error for an {"ok": false} answer. */
export function slackError(method: string, body: JSONValue, retryAfter: string): Result {
  const e = body.getString("error", "unknown_error");
  const code = codeFor(e);
  if (code == Code.RATE_LIMITED) return rateLimited(method, retryAfter);
  const d = JSONValue.object().setString("slack_error", e).setString("method", method);
  let msg = "Slack " + method + " failed: " + e;
  if (code == Code.FORBIDDEN) {
    const needed = body.getString("needed");
    if (needed.length > 0) {
      d.setString("needed", needed);
      msg += "; the connection lacks the scope " + needed + ": reconnect Slack granting it";
    }
    const provided = body.getString("provided");
    if (provided.length > 0) d.setString("provided", provided);
  }
  const meta = body.get("response_metadata");
  if (meta != null) {
    const msgs = meta.get("messages");
    if (msgs != null && msgs.isArray && msgs.length > 0) {
      d.set("messages", msgs);
      const parts = new Array<string>();
      for (let i = 0; i < msgs.length; i++) parts.push(msgs.at(i)!.asString);
      msg += " (" + parts.join("; ") + ")";
    }
  }
  return failWith(new ToolError(code, msg, d));
}

/** nextCursor is response_metadata.next_cursor, or "" on the last page. */
export function nextCursor(data: JSONValue): string {
  const meta = data.get("response_metadata");
  return meta == null ? "" : meta.getString("next_cursor");
}
