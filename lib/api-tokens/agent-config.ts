// How to point an agent at Baton, with the URL and the token filled in: the MCP endpoint for coding
// agents (a generic JSON config and the one-line commands of common ones), and the two environment
// variables of the orkestr SDK. One source for Settings → API tokens and its tests; the README shows
// the same with placeholders.

export interface AgentSnippet {
  id: string;
  /** What it is for, e.g. "Claude Code". */
  label: string;
  /** Where it goes: a shell, or a file. */
  where: string;
  text: string;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function agentSnippets(origin: string, token: string): AgentSnippet[] {
  const url = `${origin}/api/mcp`;
  const auth = `Authorization: Bearer ${token}`;
  const json = JSON.stringify(
    { mcpServers: { baton: { type: "http", url, headers: { Authorization: `Bearer ${token}` } } } },
    null,
    2,
  );
  const vscode = JSON.stringify({ name: "baton", type: "http", url, headers: { Authorization: `Bearer ${token}` } });
  return [
    { id: "json", label: "Any MCP client (JSON config)", where: "e.g. .mcp.json, .cursor/mcp.json", text: json },
    {
      id: "claude",
      label: "Claude Code",
      where: "shell",
      text: `claude mcp add --transport http baton ${url} --header ${shellQuote(auth)}`,
    },
    {
      id: "gemini",
      label: "Gemini CLI",
      where: "shell",
      text: `gemini mcp add --transport http baton ${url} --header ${shellQuote(auth)}`,
    },
    { id: "vscode", label: "VS Code", where: "shell", text: `code --add-mcp ${shellQuote(vscode)}` },
    {
      id: "sdk",
      label: "orkestr SDK, curl",
      where: "shell",
      text: `export ORKESTR_API_URL=${origin}/api\nexport ORKESTR_API_KEY=${token}`,
    },
  ];
}
