/**
 * Theme preference shared by the root layout (inline pre-paint script) and the client theme provider.
 * No imports: this runs on the server, in the browser and inside a string script.
 */
export type ThemePreference = "system" | "light" | "dark";
export type ResolvedTheme = "light" | "dark";

export const THEME_STORAGE_KEY = "baton-theme";
export const THEME_PREFERENCES: readonly ThemePreference[] = ["system", "light", "dark"];

export function isThemePreference(value: unknown): value is ThemePreference {
  return value === "system" || value === "light" || value === "dark";
}

/**
 * Runs inline in <head> before first paint (it carries the CSP nonce): applies the stored choice, or
 * the system preference, as the `dark` class on <html>. Kept tiny and dependency-free.
 */
export const themeScript = `(function(){try{var t=localStorage.getItem(${JSON.stringify(THEME_STORAGE_KEY)});var d=t==="dark"||(t!=="light"&&window.matchMedia("(prefers-color-scheme: dark)").matches);document.documentElement.classList.toggle("dark",d)}catch(e){}})()`;
