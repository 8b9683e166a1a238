"use client";

import type { ThemePreference } from "../../lib/theme";
import { cn } from "../../lib/utils";
import { MonitorIcon, MoonIcon, SunIcon } from "./icons";
import { useTheme } from "./theme-provider";

const options: { value: ThemePreference; label: string; Icon: typeof SunIcon }[] = [
  { value: "system", label: "System theme", Icon: MonitorIcon },
  { value: "light", label: "Light theme", Icon: SunIcon },
  { value: "dark", label: "Dark theme", Icon: MoonIcon },
];

/** Three toggle buttons (system / light / dark); the pressed one is the stored choice. */
export function ThemeToggle({ className }: { className?: string }) {
  const { theme, setTheme } = useTheme();
  return (
    <div
      role="group"
      aria-label="Theme"
      className={cn("inline-flex items-center gap-0.5 rounded-md border bg-background p-0.5", className)}
    >
      {options.map(({ value, label, Icon }) => (
        <button
          key={value}
          type="button"
          aria-pressed={theme === value}
          aria-label={label}
          title={label}
          onClick={() => setTheme(value)}
          className={cn(
            "inline-flex size-7 items-center justify-center rounded-sm text-muted-foreground transition-colors hover:text-foreground",
            "aria-pressed:bg-accent aria-pressed:text-accent-foreground",
          )}
        >
          <Icon />
        </button>
      ))}
    </div>
  );
}
