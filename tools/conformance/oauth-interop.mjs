// oauth-interop.mjs runs the MCP authorization flow against a Workbench
// server with the TypeScript SDK's OAuth client support: an
// OAuthClientProvider, StreamableHTTPClientTransport's 401 handling,
// discovery (RFC 9728 and RFC 8414), dynamic client registration (RFC 7591),
// PKCE and the code exchange, then a refresh when the access token stops
// working. It prints a JSON report; server/oauth_e2e_test.go runs it and
// checks the report.
//
// The consent step is the only part a person would do: this script plays
// the browser with a portal session cookie the Go test signed in, reads the
// consent form and allows it.
//
// Environment: MCP_URL (the /mcp endpoint), PORTAL_COOKIE (name=value of a
// signed-in portal session).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const mcpURL = new URL(process.env.MCP_URL);
const cookie = process.env.PORTAL_COOKIE;
// Never contacted: the script takes the code from the consent's redirect.
const redirectUrl = "http://127.0.0.1:9/callback";
const report = { consentStatus: 0, redirects: [] };

// htmlUnescape undoes the escaping html/template applies to attribute values.
function htmlUnescape(s) {
  return s
    .replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)))
    .replace(/&#x([0-9a-f]+);/gi, (_, n) => String.fromCharCode(parseInt(n, 16)))
    .replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

// consent opens the authorization URL as the signed-in user, allows the
// request and returns the code from the redirect back to the client.
async function consent(authorizationUrl) {
  const page = await fetch(authorizationUrl, { headers: { Cookie: cookie }, redirect: "manual" });
  report.consentStatus = page.status;
  const html = await page.text();
  if (page.status !== 200) throw new Error(`consent page: ${page.status} ${html.slice(0, 300)}`);
  const form = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    form.set(htmlUnescape(m[1]), htmlUnescape(m[2]));
  }
  form.set("decision", "allow");
  report.consentScope = form.get("scope");
  const answer = await fetch(new URL("/oauth/authorize", authorizationUrl), {
    method: "POST",
    headers: { Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded" },
    body: form,
    redirect: "manual",
  });
  const location = answer.headers.get("location") ?? "";
  report.redirects.push(location.split("?")[0]);
  const back = new URL(location);
  if (back.searchParams.get("state") !== "interop-state") throw new Error(`state lost: ${location}`);
  report.iss = back.searchParams.get("iss");
  const code = back.searchParams.get("code");
  if (!code) throw new Error(`no code in ${location}`);
  return code;
}

// provider keeps everything in memory, like a CLI client would for one run.
class MemoryProvider {
  code = undefined;
  #client = undefined;
  #tokens = undefined;
  #verifier = undefined;
  get redirectUrl() { return redirectUrl; }
  get clientMetadata() {
    return {
      client_name: "Workbench OAuth interop",
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() { return "interop-state"; }
  clientInformation() { return this.#client; }
  saveClientInformation(info) { this.#client = info; report.clientId = info.client_id; }
  tokens() { return this.#tokens; }
  saveTokens(tokens) { this.#tokens = tokens; report.tokenSaves = (report.tokenSaves ?? 0) + 1; }
  saveCodeVerifier(v) { this.#verifier = v; }
  codeVerifier() { return this.#verifier; }
  async redirectToAuthorization(url) {
    report.authorizationScope = url.searchParams.get("scope");
    report.authorizationResource = url.searchParams.get("resource");
    this.code = await consent(url);
  }
  // spoilAccessToken makes the next request fail with 401, as an expired
  // access token would, so that the SDK refreshes.
  spoilAccessToken() { this.#tokens = { ...this.#tokens, access_token: "expired-" + this.#tokens.access_token }; }
  get refreshToken() { return this.#tokens?.refresh_token; }
  get scope() { return this.#tokens?.scope; }
}

const provider = new MemoryProvider();
const first = new Client({ name: "workbench-oauth-interop", version: "1.0.0" });
try {
  await first.connect(new StreamableHTTPClientTransport(mcpURL, { authProvider: provider }));
  throw new Error("connected without authorization");
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
}
const transport = new StreamableHTTPClientTransport(mcpURL, { authProvider: provider });
await transport.finishAuth(provider.code);
report.grantedScope = provider.scope;
const hadRefresh = provider.refreshToken;

const client = new Client({ name: "workbench-oauth-interop", version: "1.0.0" });
await client.connect(transport);
report.tools = (await client.listTools()).tools.map((t) => t.name).sort();
const who = await client.callTool({ name: "whoami", arguments: {} });
report.whoami = who.structuredContent;

provider.spoilAccessToken();
report.toolsAfterRefresh = (await client.listTools()).tools.length;
report.refreshRotated = Boolean(hadRefresh) && provider.refreshToken !== hadRefresh;
await client.close();

process.stdout.write(JSON.stringify(report));
