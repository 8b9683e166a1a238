"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { errorText } from "../../lib/orkestr/errors";
import { updateUsageRates, usageKeys } from "../../lib/queries/usage";
import { ratesDraft, ratesSentence, readRatesDraft, type RatesDraft } from "../../lib/usage/rates-form";
import type { UsageRates } from "../../lib/usage/report";
import { Button } from "../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../ui/card";
import { Input } from "../ui/input";
import { Label } from "../ui/label";

const FIELDS: { key: keyof RatesDraft; label: string }[] = [
  { key: "vcpu", label: "EUR per vCPU-hour" },
  { key: "gib", label: "EUR per GiB-hour of memory" },
  { key: "storage", label: "EUR per GB-month of storage" },
  { key: "free", label: "GB of storage free" },
];

/**
 * The rate card every figure on the page is computed with, said to be an estimate. Owners
 * (billing.manage) change it in place (PATCH /api/usage/rates; the server validates again and its
 * refusal is shown); everyone else reads it.
 */
export function RateCard({ rates, canManage }: { rates: UsageRates; canManage: boolean }) {
  const ids = useId();
  const client = useQueryClient();
  const [draft, setDraft] = useState<RatesDraft | null>(null);
  const [errors, setErrors] = useState<Partial<Record<keyof RatesDraft, string>>>({});
  const [failure, setFailure] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!draft) return;
    const read = readRatesDraft(draft);
    if (!read.ok) return setErrors(read.errors);
    setErrors({});
    setFailure(null);
    setSaving(true);
    try {
      await updateUsageRates(read.rates);
      await client.invalidateQueries({ queryKey: usageKeys.all });
      setDraft(null);
    } catch (err) {
      setFailure(errorText(err, "The rates could not be saved."));
    } finally {
      setSaving(false);
    }
  };

  return (
    <Card data-testid="usage-rates">
      <CardHeader>
        <CardTitle>Rate card</CardTitle>
        <CardDescription>
          Prices are an estimate: {ratesSentence(rates)}. Your invoice is what orkestr bills.
        </CardDescription>
      </CardHeader>
      <CardContent>
        {draft ? (
          <form onSubmit={submit} className="flex flex-col gap-3" aria-label="Change the rate card" noValidate>
            <div className="grid grid-cols-1 gap-3 sm:grid-cols-2 lg:grid-cols-4">
              {FIELDS.map((f) => (
                <div key={f.key} className="flex flex-col gap-1">
                  <Label htmlFor={`${ids}-${f.key}`}>{f.label}</Label>
                  <Input
                    id={`${ids}-${f.key}`}
                    inputMode="decimal"
                    value={draft[f.key]}
                    onChange={(e) => setDraft({ ...draft, [f.key]: e.target.value })}
                    aria-invalid={errors[f.key] ? true : undefined}
                    aria-describedby={errors[f.key] ? `${ids}-${f.key}-error` : undefined}
                  />
                  {errors[f.key] ? (
                    <p id={`${ids}-${f.key}-error`} className="text-xs text-destructive">
                      {errors[f.key]}
                    </p>
                  ) : null}
                </div>
              ))}
            </div>
            {failure ? (
              <p role="alert" className="text-sm text-destructive" data-testid="usage-rates-error">
                {failure}
              </p>
            ) : null}
            <div className="flex gap-2">
              <Button type="submit" disabled={saving}>
                {saving ? "Saving…" : "Save rates"}
              </Button>
              <Button type="button" variant="ghost" onClick={() => setDraft(null)} disabled={saving}>
                Cancel
              </Button>
            </div>
          </form>
        ) : canManage ? (
          <Button
            variant="outline"
            size="sm"
            onClick={() => {
              setDraft(ratesDraft(rates));
              setErrors({});
              setFailure(null);
            }}
          >
            Change rates
          </Button>
        ) : (
          <p className="text-sm text-muted-foreground">Only the team&apos;s owners change the rate card.</p>
        )}
      </CardContent>
    </Card>
  );
}
