"use client";

import { useMutation } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { errorText } from "../../../lib/orkestr/errors";
import { cn } from "../../../lib/utils";
import { teamMutations } from "../../../lib/queries/account";
import { Button } from "../../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../../ui/card";
import { Dialog, DialogActions } from "../../ui/dialog";
import { Input } from "../../ui/input";
import { Label } from "../../ui/label";
import { toast } from "../../ui/toast";

type Choice = "terminate" | "leave";

/** Settings → Team: name and slug (admins), who sets spend caps (owners decide), the danger zone (owners). */
export function TeamSettings({
  team,
  canDelete,
  hasConnection,
  billing,
}: {
  team: { id: string; name: string; slug: string };
  canDelete: boolean;
  hasConnection: boolean;
  billing: { adminsManage: boolean; canDelegate: boolean };
}) {
  const [saved, setSaved] = useState({ name: team.name, slug: team.slug });
  const [name, setName] = useState(team.name);
  const [slug, setSlug] = useState(team.slug);
  const [error, setError] = useState<{ text: string; field: string | null } | null>(null);
  const errorId = useId();
  const update = useMutation({
    mutationFn: teamMutations.update,
    onSuccess: (res) => {
      setError(null);
      setSaved({ name: res.team.name, slug: res.team.slug });
      setName(res.team.name);
      setSlug(res.team.slug);
      toast.success("Team settings saved");
    },
    onError: (err) => {
      const body = (err as { body?: { field?: unknown; errors?: Record<string, string> } }).body;
      const field =
        typeof body?.field === "string" ? body.field : body?.errors ? (Object.keys(body.errors)[0] ?? null) : null;
      setError({ text: errorText(err), field: (err as { code?: string }).code === "slug_taken" ? "slug" : field });
    },
  });
  const changed = name.trim() !== saved.name || slug.trim() !== saved.slug;
  function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (update.isPending || !changed) return;
    update.mutate({
      ...(name.trim() !== saved.name ? { name } : {}),
      ...(slug.trim() !== saved.slug ? { slug } : {}),
    });
  }

  return (
    <div className="flex max-w-3xl flex-col gap-6">
      <Card>
        <CardHeader>
          <CardTitle>Team</CardTitle>
          <CardDescription>How the team is named in Baton, and the short name its links use.</CardDescription>
        </CardHeader>
        <CardContent>
          <form onSubmit={onSubmit} className="flex flex-col gap-4" aria-busy={update.isPending}>
            <div className="flex flex-col gap-2">
              <Label htmlFor="team-name">Name</Label>
              <Input
                id="team-name"
                value={name}
                onChange={(e) => setName(e.target.value)}
                maxLength={100}
                required
                aria-invalid={error?.field === "name" ? true : undefined}
                aria-describedby={error ? errorId : undefined}
              />
            </div>
            <div className="flex flex-col gap-2">
              <Label htmlFor="team-slug">Slug</Label>
              <Input
                id="team-slug"
                value={slug}
                onChange={(e) => setSlug(e.target.value.toLowerCase())}
                maxLength={48}
                required
                pattern="[a-z0-9]([a-z0-9\-]*[a-z0-9])?"
                spellCheck={false}
                autoCapitalize="none"
                className="font-mono"
                aria-invalid={error?.field === "slug" ? true : undefined}
                aria-describedby={`team-slug-hint${error ? ` ${errorId}` : ""}`}
              />
              <p id="team-slug-hint" className="text-xs text-muted-foreground">
                Lowercase letters, digits and dashes; unique across Baton. Links with the old slug stop working.
              </p>
            </div>
            {error ? (
              <p id={errorId} role="alert" className="text-sm text-destructive">
                {error.text}
              </p>
            ) : null}
            <div>
              <Button type="submit" disabled={update.isPending || !changed}>
                {update.isPending ? "Saving…" : "Save"}
              </Button>
            </div>
          </form>
        </CardContent>
      </Card>

      <BillingDelegation initial={billing.adminsManage} canDelegate={billing.canDelegate} />

      <DangerZone team={{ ...team, ...saved }} canDelete={canDelete} hasConnection={hasConnection} />
    </div>
  );
}

/** Whether the team's admins may set spend caps and prices: the owners' choice (billing.delegate). */
function BillingDelegation({ initial, canDelegate }: { initial: boolean; canDelegate: boolean }) {
  const [on, setOn] = useState(initial);
  const hintId = useId();
  const save = useMutation({
    mutationFn: (next: boolean) => teamMutations.update({ admins_manage_billing: next }),
    onSuccess: (res) => {
      setOn(res.admins_manage_billing);
      toast.success(
        res.admins_manage_billing
          ? "Admins can now set spend caps and prices"
          : "Only owners can set spend caps and prices now",
      );
    },
  });
  return (
    <Card>
      <CardHeader>
        <CardTitle>Spend caps and prices</CardTitle>
        <CardDescription>
          Owners set the team&apos;s spend caps and the prices Baton estimates costs with, on the Usage page.
        </CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-2">
        {canDelegate ? (
          <label className="flex items-start gap-2 text-sm">
            <input
              type="checkbox"
              checked={on}
              disabled={save.isPending}
              onChange={(e) => save.mutate(e.target.checked)}
              aria-describedby={hintId}
              className="mt-0.5 size-4"
            />
            <span>
              Admins may set spend caps and prices too
              <span id={hintId} className="block text-muted-foreground">
                Takes effect at once; the change is in the audit log.
              </span>
            </span>
          </label>
        ) : (
          <p className="text-sm text-muted-foreground">
            {on
              ? "The owners let admins set spend caps and prices: you can, on the Usage page."
              : "Only the team's owners set spend caps and prices; they can let admins do it here."}
          </p>
        )}
        {save.isError ? (
          <p role="alert" className="text-sm text-destructive">
            {errorText(save.error)}
          </p>
        ) : null}
      </CardContent>
    </Card>
  );
}

function DangerZone({
  team,
  canDelete,
  hasConnection,
}: {
  team: { name: string; slug: string };
  canDelete: boolean;
  hasConnection: boolean;
}) {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState("");
  const [choice, setChoice] = useState<Choice>(hasConnection ? "terminate" : "leave");
  const remove = useMutation({
    mutationFn: teamMutations.remove,
    onSuccess: () => window.location.assign("/"),
  });
  const matches = typed.trim() === team.slug;
  return (
    <Card className="border-destructive/60">
      <CardHeader>
        <CardTitle>Danger zone</CardTitle>
        <CardDescription>
          Deleting the team removes its members, invitations and connections, and revokes every engine token of the team
          at once. It cannot be undone.
        </CardDescription>
      </CardHeader>
      <CardContent>
        {canDelete ? (
          <Button variant="destructive" onClick={() => setOpen(true)}>
            Delete this team
          </Button>
        ) : (
          <p className="text-sm text-muted-foreground">Only an owner of the team can delete it.</p>
        )}
      </CardContent>
      <Dialog
        open={open}
        onOpenChange={(next) => {
          setOpen(next);
          if (!next) {
            setTyped("");
            remove.reset();
          }
        }}
        title={`Delete ${team.name}?`}
        description="Its members lose access at once. Choose what happens to the team's sandboxes."
      >
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (matches && !remove.isPending) remove.mutate({ confirm: typed.trim(), sandboxes: choice });
          }}
          className="flex flex-col gap-4"
        >
          <fieldset className="flex flex-col gap-2">
            <legend className="mb-1 text-sm font-medium">The team&apos;s sandboxes</legend>
            <label className={cn("flex items-start gap-2 text-sm", !hasConnection && "text-muted-foreground")}>
              <input
                type="radio"
                name="sandboxes"
                value="terminate"
                checked={choice === "terminate"}
                onChange={() => setChoice("terminate")}
                disabled={!hasConnection}
                className="mt-0.5 accent-destructive"
              />
              <span>
                Terminate them
                <span className="block text-muted-foreground">
                  {hasConnection
                    ? "Through the team's connection, before the team is deleted."
                    : "Needs a connection of yours to this team, which you do not have."}
                </span>
              </span>
            </label>
            <label className="flex items-start gap-2 text-sm">
              <input
                type="radio"
                name="sandboxes"
                value="leave"
                checked={choice === "leave"}
                onChange={() => setChoice("leave")}
                className="mt-0.5"
              />
              <span>
                Leave them running
                <span className="block text-muted-foreground">
                  They stop at their own timeout; Baton no longer shows them.
                </span>
              </span>
            </label>
          </fieldset>
          <div className="flex flex-col gap-2">
            <Label htmlFor="team-delete-confirm">
              Type <span className="font-mono font-semibold">{team.slug}</span> to confirm
            </Label>
            <Input
              id="team-delete-confirm"
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
              autoComplete="off"
              spellCheck={false}
              autoCapitalize="none"
              className="font-mono"
            />
          </div>
          {remove.isError ? (
            <p role="alert" className="text-sm text-destructive">
              {errorText(remove.error)}
            </p>
          ) : null}
          <DialogActions cancelDisabled={remove.isPending}>
            <Button type="submit" variant="destructive" disabled={!matches || remove.isPending}>
              {remove.isPending ? "Deleting…" : "Delete team"}
            </Button>
          </DialogActions>
        </form>
      </Dialog>
    </Card>
  );
}
