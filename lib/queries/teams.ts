import { apiJson } from "../api/core";
import { object } from "../api/read";

// The teams API (GET/POST /api/teams). Switching teams is a navigation (the URL's ?team=), not a call.

export interface TeamSummary {
  id: string;
  name: string;
  slug: string;
  role: string;
}

const readTeam = object<TeamSummary>({ id: "string", name: "string", slug: "string", role: "string" });
const readCreated = (value: unknown): { team: TeamSummary } => ({
  team: readTeam(object<{ team: unknown }>({ team: "object" })(value).team),
});

export const teamsApi = {
  create: (name: string) => apiJson({ method: "POST", path: "/api/teams", body: { name } }, readCreated),
};
