"use client";

import { useEffect, useState, type ReactNode } from "react";
import { Button, type ButtonProps } from "./button";
import { toast } from "./toast";

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
