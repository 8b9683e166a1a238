import type { ReactNode } from "react";

/**
 * A sandbox tab's body under the detail layout (which holds the page's h1 and the tabs): the tab's
 * h2, one paragraph saying what it is for, then the tab itself.
 */
export function TabSection({ title, intro, children }: { title: string; intro: ReactNode; children: ReactNode }) {
  return (
    <div className="flex flex-col gap-4">
      <div className="flex flex-col gap-1">
        <h2 className="text-lg font-semibold tracking-tight">{title}</h2>
        <p className="text-sm text-muted-foreground">{intro}</p>
      </div>
      {children}
    </div>
  );
}
