import { clsx, type ClassValue } from "clsx";
import { mergeClasses } from "./class-merge";

/** Joins class names and lets later Tailwind utilities override earlier conflicting ones. */
export function cn(...inputs: ClassValue[]): string {
  return mergeClasses(clsx(inputs));
}

/** "api.orkestr.eu" / "127.0.0.1:8787" of a base URL (the URL itself when it does not parse). */
export function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).host;
  } catch {
    return baseUrl;
  }
}
