"use client";

import { useEffect, useRef, useState } from "react";
import type { EditorView } from "@codemirror/view";
import { cn } from "../../../lib/utils";

type Module = typeof import("./codemirror");

export const STEPS_PLACEHOLDER = "pip install requests\necho 'ready' > /opt/ready.txt";

/**
 * The steps, one shell command per line, in CodeMirror with shell highlighting. CodeMirror loads on
 * demand (its own chunk, ~100 KiB): until it has, and if it cannot, a plain textarea bound to the
 * same value takes the input, so nothing typed meanwhile is lost.
 */
export function StepsEditor({
  id,
  value,
  onChange,
  labelId,
  describedBy,
  invalid,
}: {
  id: string;
  value: string;
  onChange: (value: string) => void;
  labelId: string;
  describedBy?: string;
  invalid?: boolean;
}) {
  const [mod, setMod] = useState<Module | null>(null);
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const latest = useRef({ value, onChange });
  useEffect(() => {
    latest.current = { value, onChange };
  });

  useEffect(() => {
    let live = true;
    import("./codemirror").then(
      (m) => live && setMod(m),
      () => undefined, // the textarea stays
    );
    return () => {
      live = false;
    };
  }, []);

  useEffect(() => {
    if (!mod || !host.current) return;
    const attributes: Record<string, string> = { "aria-labelledby": labelId, id };
    if (describedBy) attributes["aria-describedby"] = describedBy;
    if (invalid) attributes["aria-invalid"] = "true";
    const v = mod.mountStepsEditor({
      parent: host.current,
      value: latest.current.value,
      onChange: (next) => latest.current.onChange(next),
      attributes,
      placeholderText: STEPS_PLACEHOLDER,
    });
    view.current = v;
    return () => {
      v.destroy();
      view.current = null;
    };
  }, [mod, id, labelId, describedBy, invalid]);

  useEffect(() => {
    if (mod && view.current) mod.syncValue(view.current, value);
  }, [mod, value]);

  return (
    <div data-testid="steps-editor" data-editor={mod ? "codemirror" : "textarea"}>
      {mod ? (
        <div ref={host} />
      ) : (
        <textarea
          id={id}
          aria-labelledby={labelId}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          value={value}
          onChange={(e) => onChange(e.target.value)}
          placeholder={STEPS_PLACEHOLDER}
          spellCheck={false}
          rows={6}
          className={cn(
            "w-full rounded-md border border-input bg-background px-3 py-2 font-mono text-[0.8125rem] shadow-xs",
            invalid && "border-destructive",
          )}
        />
      )}
    </div>
  );
}
