import type { ReactNode } from "react";
import { BatonMark } from "../../components/layout/nav-icons";
import { ThemeToggle } from "../../components/layout/theme-toggle";

/** Sign-in and first-run pages: one centred card, no console chrome. */
export default function AuthLayout({ children }: { children: ReactNode }) {
  return (
    <div className="flex min-h-dvh flex-col">
      <header className="flex h-14 items-center justify-between px-4 sm:px-6">
        <span className="flex items-center gap-2 text-base font-semibold tracking-tight">
          <span className="inline-flex size-7 items-center justify-center rounded-md bg-primary text-primary-foreground">
            <BatonMark />
          </span>
          Baton
        </span>
        <ThemeToggle />
      </header>
      <main id="main" className="flex flex-1 items-start justify-center px-4 pt-[8vh] pb-16 sm:px-6">
        <div className="w-full max-w-sm">{children}</div>
      </main>
    </div>
  );
}
