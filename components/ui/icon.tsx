import type { ComponentProps } from "react";

export type IconProps = ComponentProps<"svg">;

/**
 * The frame of every inline icon (components/layout/icons.tsx, components/sandboxes/files/icons.tsx):
 * a 24px grid of round 1.75 strokes in the current text colour, 16px by default. No icon package in
 * the bundle. Decorative: whatever shows one also has a visible or aria label.
 */
export function Icon({ children, ...props }: IconProps) {
  return (
    <svg
      xmlns="http://www.w3.org/2000/svg"
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth={1.75}
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
      width={16}
      height={16}
      {...props}
    >
      {children}
    </svg>
  );
}
