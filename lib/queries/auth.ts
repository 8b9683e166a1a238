import { apiJson, apiVoid } from "../api/core";
import { object } from "../api/read";

// Signing in and the first run, through the browser core like every other call: a failure is an
// OrkestrError whose `detail` the form shows (errorText).

interface User {
  id: string;
  name: string;
  email: string;
}
const readSignedIn = object<{ user: User }>({ user: "object" });
const readSetUp = object<{ user: User; team: { id: string; name: string; slug: string } }>({
  user: "object",
  team: "object",
});

export const authMutations = {
  /** POST /api/auth/login: sets the session cookie. */
  login: (body: { email: string; password: string }) =>
    apiJson({ method: "POST", path: "/api/auth/login", body }, readSignedIn),
  /** POST /api/setup: the owner account and the first team, with the setup code the server printed. */
  setup: (body: { name: string; email: string; password: string; team_name: string; setup_code: string }) =>
    apiJson({ method: "POST", path: "/api/setup", body }, readSetUp),
  /** POST /api/auth/logout (this browser) or /api/auth/logout-everywhere (every session of the user). */
  logout: (everywhere: boolean) =>
    apiVoid({ method: "POST", path: everywhere ? "/api/auth/logout-everywhere" : "/api/auth/logout", body: {} }),
};
