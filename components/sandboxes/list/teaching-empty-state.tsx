import { Button } from "../../ui/button";
import { NavIcon } from "../../layout/nav-icons";
import { ReadOnlyNote } from "../../ui/read-only-note";
import { useSandboxAccess } from "../detail/use-sandbox-access";
import { TeamLink as Link } from "../../layout/team-link";

/** The Python SDK's quick start (seed 003), as the README shows it. */
const SDK_SHELL = `pip install orkestr
export ORKESTR_API_KEY="ork_..."`;

const SDK_SNIPPET = `from orkestr import Sandbox

with Sandbox.create(template="python-3.12") as sbx:
    sbx.files.write("/workspace/main.py", "print(sum(range(1_000_000)))")
    result = sbx.exec("python /workspace/main.py")
    print(result.stdout)        # 499999500000`;

/** No sandboxes at all yet: what one is, how to make one here, and how from code. */
export function TeachingEmptyState() {
  const { canChange, whyNot } = useSandboxAccess();
  return (
    <section
      aria-labelledby="sandboxes-empty-title"
      className="flex flex-col gap-6 rounded-lg border border-dashed border-input px-6 py-10"
    >
      <div className="flex flex-col items-center gap-3 text-center">
        <div
          aria-hidden="true"
          className="flex size-12 items-center justify-center rounded-full bg-muted text-muted-foreground [&_svg]:size-6"
        >
          <NavIcon name="sandboxes" />
        </div>
        <h2 id="sandboxes-empty-title" className="text-lg font-semibold">
          No sandboxes yet
        </h2>
        <p className="max-w-xl text-sm text-muted-foreground">
          A sandbox is an isolated Linux machine that starts in well under a second. Run untrusted or AI-generated code
          in it, read and write its files, preview the web servers it starts, then pause it (memory and disk kept, no
          CPU billed) or terminate it. You pay only for the CPU time and memory it really uses.
        </p>
        {canChange ? (
          <Button asChild>
            <Link href="/sandboxes/new">Create your first sandbox</Link>
          </Button>
        ) : (
          <ReadOnlyNote>{whyNot("create sandboxes")}</ReadOnlyNote>
        )}
      </div>
      <div className="mx-auto flex w-full max-w-2xl flex-col gap-2">
        <h3 className="text-sm font-medium">Or from code, with the Python SDK</h3>
        <pre
          className="overflow-x-auto rounded-md border bg-muted p-4 font-mono text-xs leading-relaxed"
          tabIndex={0}
          aria-label="Install the SDK"
        >
          <code>{SDK_SHELL}</code>
        </pre>
        <pre
          className="overflow-x-auto rounded-md border bg-muted p-4 font-mono text-xs leading-relaxed"
          tabIndex={0}
          aria-label="Python SDK example"
        >
          <code>{SDK_SNIPPET}</code>
        </pre>
        <p className="text-xs text-muted-foreground">
          The SDK reads an API token with the sandboxes:write scope from ORKESTR_API_KEY. Sandboxes made from code
          appear in this list as soon as they start.
        </p>
      </div>
    </section>
  );
}
