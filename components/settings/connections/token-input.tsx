import type { ComponentProps } from "react";
import { Input } from "../../ui/input";

/**
 * The field for an orkestr API token, wherever one is entered (adding a connection, replacing its
 * token): a password input named `token` that the browser neither autofills nor spell-checks (the
 * value is a secret, not a word or a saved login).
 */
export function TokenInput(props: Omit<ComponentProps<"input">, "name" | "type">) {
  return (
    <Input name="token" type="password" required placeholder="ork_…" autoComplete="off" spellCheck={false} {...props} />
  );
}
