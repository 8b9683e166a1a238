import type { Config } from "tailwindcss";

/**
 * Baton's design tokens. Colours are CSS variables (see app/globals.css) so one class list serves the
 * light and the dark theme; dark mode is the `.dark` class on <html>, set before first paint by the
 * inline theme script in app/layout.tsx (system preference unless the user chose otherwise).
 * Loaded by Tailwind 4 through `@config "../tailwind.config.ts";` in app/globals.css.
 */
const color = (name: string) => `var(--${name})`;

const config = {
  darkMode: "class",
  content: ["./app/**/*.{ts,tsx}", "./components/**/*.{ts,tsx}", "./lib/**/*.{ts,tsx}"],
  theme: {
    extend: {
      colors: {
        background: color("background"),
        foreground: color("foreground"),
        border: color("border"),
        input: color("input"),
        ring: color("ring"),
        muted: { DEFAULT: color("muted"), foreground: color("muted-foreground") },
        card: { DEFAULT: color("card"), foreground: color("card-foreground") },
        popover: { DEFAULT: color("popover"), foreground: color("popover-foreground") },
        primary: { DEFAULT: color("primary"), foreground: color("primary-foreground") },
        secondary: { DEFAULT: color("secondary"), foreground: color("secondary-foreground") },
        accent: { DEFAULT: color("accent"), foreground: color("accent-foreground") },
        destructive: { DEFAULT: color("destructive"), foreground: color("destructive-foreground") },
        success: { DEFAULT: color("success"), foreground: color("success-foreground") },
        warning: { DEFAULT: color("warning"), foreground: color("warning-foreground") },
      },
      borderRadius: {
        lg: "var(--radius)",
        md: "calc(var(--radius) - 2px)",
        sm: "calc(var(--radius) - 4px)",
      },
      // System font stacks only: nothing is downloaded.
      fontFamily: {
        sans: [
          "system-ui",
          "-apple-system",
          "Segoe UI",
          "Roboto",
          "Noto Sans",
          "Ubuntu",
          "Cantarell",
          "Helvetica Neue",
          "Arial",
          "sans-serif",
          "Apple Color Emoji",
          "Segoe UI Emoji",
        ],
        mono: [
          "ui-monospace",
          "SFMono-Regular",
          "SF Mono",
          "Menlo",
          "Cascadia Mono",
          "Consolas",
          "Liberation Mono",
          "DejaVu Sans Mono",
          "monospace",
        ],
      },
    },
  },
} satisfies Config;

export default config;
