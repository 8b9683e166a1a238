import { describe, expect, it } from "vitest";
import { agentSnippets } from "./agent-config";

describe("agentSnippets", () => {
  const snippets = agentSnippets("https://baton.example.com", "bat_TOKEN");
  const byId = new Map(snippets.map((s) => [s.id, s.text]));

  it("gives a JSON config any MCP client reads, with the endpoint and the bearer header", () => {
    expect(JSON.parse(byId.get("json")!)).toEqual({
      mcpServers: {
        baton: {
          type: "http",
          url: "https://baton.example.com/api/mcp",
          headers: { Authorization: "Bearer bat_TOKEN" },
        },
      },
    });
  });

  it("fills the one-line commands, quoted for a POSIX shell", () => {
    expect(byId.get("claude")).toBe(
      "claude mcp add --transport http baton https://baton.example.com/api/mcp --header 'Authorization: Bearer bat_TOKEN'",
    );
    expect(byId.get("vscode")).toMatch(/^code --add-mcp '\{"name":"baton","type":"http"/);
    expect(byId.get("sdk")).toBe(
      "export ORKESTR_API_URL=https://baton.example.com/api\nexport ORKESTR_API_KEY=bat_TOKEN",
    );
  });
});
