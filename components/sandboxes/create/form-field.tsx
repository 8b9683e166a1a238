import type { ComponentProps, ReactNode } from "react";
import { cn } from "../../../lib/utils";

/** The ARIA a control needs to be tied to its hint and inline error. */
export interface FieldAria {
  id: string;
  "aria-invalid"?: true;
  "aria-describedby"?: string;
}

/** One labelled control with an optional hint and an inline error (announced with the control). */
export function FormField({
  id,
  label,
  hint,
  error,
  children,
  className,
}: {
  id: string;
  label: ReactNode;
  hint?: ReactNode;
  error?: string;
  children: (aria: FieldAria) => ReactNode;
  className?: string;
}) {
  const describedBy = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(" ");
  return (
    <div className={cn("flex flex-col gap-1.5", className)}>
      <label htmlFor={id} className="text-sm font-medium">
        {label}
      </label>
      {children({
        id,
        ...(error ? { "aria-invalid": true as const } : {}),
        ...(describedBy ? { "aria-describedby": describedBy } : {}),
      })}
      {hint ? (
        <p id={`${id}-hint`} className="text-xs text-muted-foreground">
          {hint}
        </p>
      ) : null}
      <FieldError id={`${id}-error`} error={error} />
    </div>
  );
}

export function FieldError({ id, error }: { id: string; error?: string }) {
  if (!error) return null;
  return (
    <p id={id} className="text-xs font-medium text-destructive">
      {error}
    </p>
  );
}

/** A group of radio cards or checkboxes: a fieldset whose legend names it. */
export function FieldGroup({
  legend,
  hint,
  error,
  errorId,
  children,
}: {
  legend: ReactNode;
  hint?: ReactNode;
  error?: string;
  errorId: string;
  children: ReactNode;
}) {
  return (
    <fieldset className="flex flex-col gap-2" aria-describedby={error ? errorId : undefined}>
      <legend className="mb-1.5 text-sm font-medium">{legend}</legend>
      {hint ? <p className="-mt-1 text-xs text-muted-foreground">{hint}</p> : null}
      {children}
      <FieldError id={errorId} error={error} />
    </fieldset>
  );
}

/** A native <select> styled like the inputs (keyboard and screen readers get the platform's own). */
export function NativeSelect({ className, ...props }: ComponentProps<"select">) {
  return (
    <select
      className={cn(
        "flex h-9 w-full min-w-0 rounded-md border border-input bg-background px-3 py-1 text-sm shadow-xs transition-colors",
        "disabled:cursor-not-allowed disabled:opacity-50 aria-invalid:border-destructive",
        className,
      )}
      {...props}
    />
  );
}

/** A radio shown as a card: the input stays a real radio (arrow keys move within the group). */
export function RadioCard({
  name,
  value,
  checked,
  disabled,
  onChange,
  title,
  description,
  refusal,
}: {
  name: string;
  value: string;
  checked: boolean;
  disabled?: boolean;
  onChange: (value: string) => void;
  title: ReactNode;
  description?: ReactNode;
  /** Why it is disabled, shown under it. */
  refusal?: string | null;
}) {
  const id = `${name}-${value}`;
  return (
    <label
      htmlFor={id}
      className={cn(
        "flex cursor-pointer items-start gap-3 rounded-md border p-3 text-sm transition-colors has-[:focus-visible]:ring-2 has-[:focus-visible]:ring-ring",
        checked ? "border-primary bg-primary/5" : "border-input hover:bg-accent/50",
        disabled && "cursor-not-allowed opacity-60 hover:bg-transparent",
      )}
    >
      <input
        id={id}
        type="radio"
        name={name}
        value={value}
        checked={checked}
        disabled={disabled}
        onChange={() => onChange(value)}
        aria-describedby={refusal ? `${id}-why` : description ? `${id}-desc` : undefined}
        className="mt-0.5 size-4 accent-primary"
      />
      <span className="flex min-w-0 flex-col gap-0.5">
        <span className="font-medium">{title}</span>
        {description ? (
          <span id={`${id}-desc`} className="text-xs text-muted-foreground">
            {description}
          </span>
        ) : null}
        {refusal ? (
          <span id={`${id}-why`} className="text-xs text-muted-foreground">
            {refusal}
          </span>
        ) : null}
      </span>
    </label>
  );
}

/** A checkbox with its label and an optional explanation. */
export function CheckboxField({
  id,
  checked,
  onChange,
  label,
  description,
  disabled,
  error,
}: {
  id: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  label: ReactNode;
  description?: ReactNode;
  disabled?: boolean;
  error?: string;
}) {
  const describedBy =
    [description ? `${id}-desc` : null, error ? `${id}-error` : null].filter(Boolean).join(" ") || undefined;
  return (
    <div className="flex items-start gap-3">
      <input
        id={id}
        type="checkbox"
        checked={checked}
        disabled={disabled}
        onChange={(e) => onChange(e.target.checked)}
        aria-describedby={describedBy}
        aria-invalid={error ? true : undefined}
        className="mt-0.5 size-4 accent-primary disabled:opacity-50"
      />
      <div className="flex flex-col gap-0.5">
        <label htmlFor={id} className={cn("text-sm font-medium", disabled && "opacity-60")}>
          {label}
        </label>
        {description ? (
          <p id={`${id}-desc`} className="text-xs text-muted-foreground">
            {description}
          </p>
        ) : null}
        <FieldError id={`${id}-error`} error={error} />
      </div>
    </div>
  );
}
