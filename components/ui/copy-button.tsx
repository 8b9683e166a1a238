"use client";

import { useEffect, useState, type ReactNode } from "react";
import { Button, type ButtonProps } from "./button";
import { Icon, type IconProps } from "./icon";
import { toast } from "./toast";

// Here rather than with the Files tab's icons: the sandbox list shows it in every row and should not
// load the other icons (modules are bundled whole).
export const CopyIcon = (p: IconProps) => (
  <Icon {...p}>
    <rect x="8" y="8" width="12" height="12" rx="1.5" />
    <path d="M16 8V5.5A1.5 1.5 0 0 0 14.5 4h-9A1.5 1.5 0 0 0 4 5.5v9A1.5 1.5 0 0 0 5.5 16H8" />
  </Icon>
);

/**
 * The console's one copy-to-clipboard button: copies `text`, says so on the button for two seconds
 * (and in a toast when `announce` is given), and says what to do when the browser refuses.
 */
export function CopyButton({
  text,
  label = "Copy",
  copiedLabel = "Copied",
  announce,
  ...props
}: {
  text: string;
  label?: ReactNode;
  copiedLabel?: ReactNode;
  /** A toast after copying, for what the button alone cannot say (what was copied, what to mind). */
  announce?: { title: string; description?: string };
} & Omit<ButtonProps, "onClick" | "children">) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 2000);
    return () => clearTimeout(timer);
  }, [copied]);
  return (
    <Button
      variant="outline"
      size="sm"
      {...props}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setCopied(true);
          if (announce) toast.success(announce.title, { description: announce.description });
        } catch {
          toast.error("Could not copy", {
            description: "The browser refused clipboard access: select the text and copy it by hand.",
          });
        }
      }}
    >
      {copied ? copiedLabel : label}
    </Button>
  );
}
