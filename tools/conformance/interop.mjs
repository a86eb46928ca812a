// interop.mjs drives a Workbench /mcp endpoint with the TypeScript SDK's
// Client over StreamableHTTPClientTransport and prints a JSON report of what
// it saw. server/internal/mcp/interop_test.go runs it against the GitHub
// plugin and the fake GitHub and checks the report.
//
// Environment: MCP_URL (the endpoint), MCP_TOKEN (a connected user's bearer
// token), MCP_OTHER_TOKEN (a user without a GitHub connection).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.env.MCP_URL);

async function connect(token) {
  const client = new Client({ name: "workbench-interop", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

// json returns the decoded text content of a tool result.
function json(result) {
  const text = result.content.find((c) => c.type === "text");
  if (!text) throw new Error(`no text content in ${JSON.stringify(result)}`);
  return JSON.parse(text.text);
}

const report = {};
const client = await connect(process.env.MCP_TOKEN);
report.protocolVersion = client.transport?.protocolVersion ?? "";

const tools = await client.listTools();
report.tools = tools.tools.map((t) => t.name).sort();

const search = json(await client.callTool({ name: "search_tools", arguments: { query: "list pull requests" } }));
report.firstHit = search.hits[0]?.slug;

const schema = await client.callTool({ name: "get_tool_schema", arguments: { tool: "github_get_repo" } });
report.schemaRequired = [...(schema.structuredContent.inputSchema.required ?? [])].sort();

const exec = json(await client.callTool({
  name: "execute_tools",
  arguments: { executions: [{ tool: "github_get_repo", arguments: { owner: "octocat", repo: "hello-world" } }] },
}));
if (!exec.results[0].ok) throw new Error(`github_get_repo failed: ${JSON.stringify(exec.results[0])}`);
report.repoFullName = exec.results[0].result.full_name;
await client.close();

const other = await connect(process.env.MCP_OTHER_TOKEN);
const denied = json(await other.callTool({
  name: "execute_tools",
  arguments: { executions: [{ tool: "github_get_repo", arguments: { owner: "octocat", repo: "hello-world" } }] },
}));
report.otherError = denied.results[0].error;
await other.close();

// Without a token the endpoint answers 401 before MCP starts.
const bare = await fetch(url, {
  method: "POST",
  headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }),
});
report.unauthorizedStatus = bare.status;

process.stdout.write(JSON.stringify(report));
