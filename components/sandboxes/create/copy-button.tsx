"use client";

import { useState } from "react";
import { toast } from "../../ui/toast";
import { Button, type ButtonProps } from "../../ui/button";

/** Copies `text` to the clipboard and says so (button text and a polite toast). */
export function CopyButton({
  text,
  label = "Copy",
  copiedLabel = "Copied",
  ...props
}: { text: string; label?: string; copiedLabel?: string } & Omit<ButtonProps, "onClick">) {
  const [copied, setCopied] = useState(false);
  return (
    <Button
      variant="outline"
      size="sm"
      {...props}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setCopied(true);
          setTimeout(() => setCopied(false), 2000);
        } catch {
          toast.error("Could not copy: the browser refused clipboard access. Select the text and copy it by hand.");
        }
      }}
    >
      {copied ? copiedLabel : label}
    </Button>
  );
}
