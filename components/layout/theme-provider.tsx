"use client";

import { createContext, useContext, useEffect, useMemo, useSyncExternalStore, type ReactNode } from "react";
import { THEME_STORAGE_KEY, isThemePreference, type ResolvedTheme, type ThemePreference } from "../../lib/theme";

interface ThemeContextValue {
  /** What the user chose; "system" follows prefers-color-scheme. */
  theme: ThemePreference;
  /** What is applied right now. */
  resolvedTheme: ResolvedTheme;
  setTheme: (theme: ThemePreference) => void;
}

const ThemeContext = createContext<ThemeContextValue | null>(null);

const DARK_QUERY = "(prefers-color-scheme: dark)";
const CHANGE_EVENT = "baton-theme-change";

// Used only when localStorage is unavailable (blocked storage): the choice then lasts for this page.
let memoryPreference: ThemePreference = "system";

function readPreference(): ThemePreference {
  try {
    const stored = window.localStorage.getItem(THEME_STORAGE_KEY);
    return isThemePreference(stored) ? stored : "system";
  } catch {
    return memoryPreference;
  }
}

function writePreference(theme: ThemePreference): void {
  memoryPreference = theme;
  try {
    if (theme === "system") window.localStorage.removeItem(THEME_STORAGE_KEY);
    else window.localStorage.setItem(THEME_STORAGE_KEY, theme);
  } catch {
    // storage blocked: memoryPreference holds it
  }
  window.dispatchEvent(new Event(CHANGE_EVENT));
}

// The stored preference is an external store: other tabs change it (storage event), so does setTheme.
function subscribePreference(onChange: () => void): () => void {
  const onStorage = (event: StorageEvent) => {
    if (event.key === null || event.key === THEME_STORAGE_KEY) onChange();
  };
  window.addEventListener("storage", onStorage);
  window.addEventListener(CHANGE_EVENT, onChange);
  return () => {
    window.removeEventListener("storage", onStorage);
    window.removeEventListener(CHANGE_EVENT, onChange);
  };
}

function subscribeSystem(onChange: () => void): () => void {
  const query = window.matchMedia(DARK_QUERY);
  query.addEventListener("change", onChange);
  return () => query.removeEventListener("change", onChange);
}

const systemIsDark = () => window.matchMedia(DARK_QUERY).matches;

/** Sets the `dark` class on <html> from the stored choice or the system preference. */
export function applyTheme(): void {
  const preference = readPreference();
  document.documentElement.classList.toggle(
    "dark",
    preference === "dark" || (preference === "system" && systemIsDark()),
  );
}
// On the server (and during hydration) nothing is known; the pre-paint script has already set the class.
const serverPreference = (): ThemePreference => "system";
const serverSystemIsDark = () => false;

export function ThemeProvider({ children }: { children: ReactNode }) {
  const theme = useSyncExternalStore(subscribePreference, readPreference, serverPreference);
  const dark = useSyncExternalStore(subscribeSystem, systemIsDark, serverSystemIsDark);
  const resolvedTheme: ResolvedTheme = theme === "system" ? (dark ? "dark" : "light") : theme;

  // The class follows the live sources, never the rendered state: during hydration that state is the
  // server placeholder, and applying it would undo the pre-paint script for one frame.
  useEffect(() => {
    applyTheme();
    const unsubscribePreference = subscribePreference(applyTheme);
    const unsubscribeSystem = subscribeSystem(applyTheme);
    return () => {
      unsubscribePreference();
      unsubscribeSystem();
    };
  }, []);

  const value = useMemo(() => ({ theme, resolvedTheme, setTheme: writePreference }), [theme, resolvedTheme]);
  return <ThemeContext.Provider value={value}>{children}</ThemeContext.Provider>;
}

export function useTheme(): ThemeContextValue {
  const value = useContext(ThemeContext);
  if (!value) throw new Error("useTheme must be used inside <ThemeProvider>");
  return value;
}
