"use client";

import { useState } from "react";
import { Button } from "../../ui/button";
import { Dialog, DialogActions } from "../../ui/dialog";
import { Input } from "../../ui/input";
import { formatDuration } from "../../../lib/format";

const PRESETS = [300, 900, 3600, 4 * 3600, 24 * 3600];

/** set_timeout: the countdown restarts at now + N seconds (N from 10 to the plan's cap). */
export function KeepAliveDialog({
  open,
  onOpenChange,
  current,
  maxSeconds,
  pending,
  onSubmit,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  current: number | null;
  maxSeconds: number;
  pending: boolean;
  onSubmit: (seconds: number) => void;
}) {
  const [value, setValue] = useState(String(current ?? 600));
  const [error, setError] = useState<string | null>(null);
  const submit = () => {
    const n = Number(value.trim());
    if (!/^\d+$/.test(value.trim())) return setError("Enter a whole number of seconds.");
    if (n < 10) return setError("At least 10 seconds.");
    if (n > maxSeconds) return setError(`At most ${maxSeconds} seconds on your plan.`);
    setError(null);
    onSubmit(n);
  };
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title="Keep alive"
      description="Restart the countdown: the sandbox ends (or pauses) this long from now."
    >
      <form
        noValidate
        className="flex flex-col gap-4"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <div className="flex flex-wrap gap-2" role="group" aria-label="Presets">
          {PRESETS.filter((p) => p <= maxSeconds).map((p) => (
            <Button
              key={p}
              type="button"
              size="sm"
              variant={value === String(p) ? "default" : "outline"}
              onClick={() => setValue(String(p))}
            >
              {formatDuration(p * 1000)}
            </Button>
          ))}
        </div>
        <div className="flex flex-col gap-1.5">
          <label htmlFor="keep-alive-seconds" className="text-sm font-medium">
            Seconds from now
          </label>
          <Input
            id="keep-alive-seconds"
            inputMode="numeric"
            value={value}
            onChange={(e) => setValue(e.target.value)}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? "keep-alive-error" : "keep-alive-hint"}
          />
          <p id="keep-alive-hint" className="text-xs text-muted-foreground">
            From 10 to {maxSeconds} seconds.
          </p>
          {error ? (
            <p id="keep-alive-error" className="text-xs font-medium text-destructive">
              {error}
            </p>
          ) : null}
        </div>
        <DialogActions>
          <Button type="submit" disabled={pending}>
            {pending ? "Saving…" : "Restart the countdown"}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
