"use client";

import { formatDuration, formatUtc } from "../../lib/format";
import { useNow } from "../../lib/use-now";
import { Input } from "../ui/input";
import { FieldError } from "../sandboxes/create/form-field";
import { MAX_LIFETIME_DAYS, MAX_LIFETIME_HOURS, type LifetimeInput, type LifetimeUnit } from "./volume-model";

const UNITS: { unit: LifetimeUnit; label: string }[] = [
  { unit: "none", label: "Keep until deleted" },
  { unit: "hours", label: "Hours" },
  { unit: "days", label: "Days" },
];

/**
 * A volume's max lifetime: none, 1-24 hours or 1-3650 days (the API takes one or the other). With
 * `deadline`, says when that ends the volume, and warns when it is already over.
 */
export function LifetimeField({
  id,
  value,
  onChange,
  error,
  deadline,
}: {
  id: string;
  value: LifetimeInput;
  onChange: (next: LifetimeInput) => void;
  error?: string;
  /** When the volume would be deleted with this lifetime (ms), or null. */
  deadline: number | null;
}) {
  const now = useNow();
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  return (
    <fieldset className="flex flex-col gap-2" aria-describedby={error ? errorId : hintId}>
      <legend className="mb-1.5 text-sm font-medium">Max lifetime</legend>
      <div className="flex flex-wrap items-center gap-x-4 gap-y-2">
        {UNITS.map((u) => (
          <label key={u.unit} className="flex items-center gap-2 text-sm">
            <input
              type="radio"
              name={`${id}-unit`}
              value={u.unit}
              checked={value.unit === u.unit}
              onChange={() => onChange({ ...value, unit: u.unit })}
              className="size-4 accent-primary"
            />
            {u.label}
          </label>
        ))}
      </div>
      {value.unit === "none" ? null : (
        <div className="flex items-center gap-2">
          <label htmlFor={`${id}-amount`} className="sr-only">
            Number of {value.unit}
          </label>
          <Input
            id={`${id}-amount`}
            type="number"
            inputMode="numeric"
            min={1}
            max={value.unit === "hours" ? MAX_LIFETIME_HOURS : MAX_LIFETIME_DAYS}
            value={value.amount}
            onChange={(e) => onChange({ ...value, amount: e.target.value })}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? errorId : hintId}
            className="w-28"
          />
          <span className="text-sm text-muted-foreground">{value.unit}</span>
        </div>
      )}
      <p id={hintId} className="text-xs text-muted-foreground">
        {value.unit === "none" ? (
          "The volume stays until you delete it."
        ) : deadline === null ? (
          `Counted from the volume's creation; ${value.unit === "hours" ? `1 to ${MAX_LIFETIME_HOURS}` : `1 to ${MAX_LIFETIME_DAYS}`}.`
        ) : now !== null && deadline <= now ? (
          <span className="font-medium text-destructive" data-testid="lifetime-over">
            Counted from the volume&apos;s creation, this lifetime is already over: the volume and its data are deleted
            as soon as no sandbox holds it.
          </span>
        ) : (
          <>
            Counted from the volume&apos;s creation: deleted with its data at {formatUtc(deadline)}
            {now === null ? "" : ` (in ${formatDuration(deadline - now)})`}, or once its holder ends if a sandbox holds
            it then.
          </>
        )}
      </p>
      <FieldError id={errorId} error={error} />
    </fieldset>
  );
}
