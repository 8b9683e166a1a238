import type { Snippets } from "../../lib/code/snippet";
import { CodeTabs } from "../ui/code-tabs";

/** "Show code" under an action: the same request as Python SDK, JS SDK and curl, ready to copy. */
export function ActionCode({ snippets, what }: { snippets: Snippets; what: string }) {
  return (
    <details className="group rounded-md border px-3 py-2 text-sm">
      <summary className="cursor-pointer select-none font-medium text-muted-foreground hover:text-foreground">
        Show code: {what}
      </summary>
      <div className="pt-3">
        <CodeTabs snippets={snippets} testId="volume-code" />
      </div>
    </details>
  );
}
