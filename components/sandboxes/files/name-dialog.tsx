"use client";

import { useId, useState, type FormEvent } from "react";
import { invalidName } from "../../../lib/queries/files";
import { Button } from "../../ui/button";
import { Dialog, DialogActions } from "../../ui/dialog";
import { Input } from "../../ui/input";
import { Label } from "../../ui/label";

/**
 * Asks for one new name in the current folder (New folder, New file). The name is checked here
 * (one path segment); the server's refusal comes back as `error` and stays on the field.
 */
export function NameDialog({
  open,
  onOpenChange,
  title,
  description,
  label,
  submitLabel,
  pending,
  error,
  onSubmit,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  description: string;
  label: string;
  submitLabel: string;
  pending: boolean;
  error: string | null;
  onSubmit: (name: string) => void;
}) {
  return (
    <Dialog open={open} onOpenChange={onOpenChange} title={title} description={description}>
      {/* Mounted fresh on each open (Dialog renders children only while open): the field starts empty. */}
      <NameForm label={label} submitLabel={submitLabel} pending={pending} error={error} onSubmit={onSubmit} />
    </Dialog>
  );
}

function NameForm({
  label,
  submitLabel,
  pending,
  error,
  onSubmit,
}: {
  label: string;
  submitLabel: string;
  pending: boolean;
  error: string | null;
  onSubmit: (name: string) => void;
}) {
  const [name, setName] = useState("");
  const [touched, setTouched] = useState(false);
  const id = useId();
  const local = touched ? invalidName(name) : null;
  const message = local ?? error;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (invalidName(name)) return;
    onSubmit(name.trim());
  };
  return (
    <form onSubmit={submit} className="flex flex-col gap-4" noValidate>
      <div className="flex flex-col gap-2">
        <Label htmlFor={id}>{label}</Label>
        <Input
          id={id}
          value={name}
          onChange={(e) => setName(e.target.value)}
          autoFocus
          autoComplete="off"
          spellCheck={false}
          aria-invalid={message ? true : undefined}
          aria-describedby={message ? `${id}-error` : undefined}
        />
        {message ? (
          <p id={`${id}-error`} className="text-sm text-destructive">
            {message}
          </p>
        ) : null}
      </div>
      <DialogActions>
        <Button type="submit" disabled={pending}>
          {pending ? "Working…" : submitLabel}
        </Button>
      </DialogActions>
    </form>
  );
}
