import type { Metadata } from "next";
import Link from "next/link";
import { PageHeader } from "../../../../../components/layout/page-header";
import { TerminalLoader } from "../../../../../components/sandboxes/terminal/terminal-loader";

export const metadata: Metadata = { title: "Terminal" };

/** The sandbox's terminals. `?mode=line` forces line mode (streaming exec) even where PTYs exist. */
export default async function SandboxTerminalPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<{ mode?: string | string[] }> }) {
  const { id } = await params;
  const { mode } = await searchParams;
  return (
    <div>
      <PageHeader
        title="Terminal"
        description={
          <>
            Shells inside sandbox <Link href={`/sandboxes/${encodeURIComponent(id)}`} prefetch={false} className="font-mono underline-offset-4 hover:underline">{id}</Link>
          </>
        }
      />
      <TerminalLoader sandboxId={id} forceLine={mode === "line"} />
    </div>
  );
}
