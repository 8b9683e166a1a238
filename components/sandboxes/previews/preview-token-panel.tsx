"use client";

import { useMutation } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { toast } from "../../ui/toast";
import { previewMutations } from "../../../lib/queries/previews";
import { Button } from "../../ui/button";
import { Dialog, DialogActions } from "../../ui/dialog";
import { Input } from "../../ui/input";
import { Label } from "../../ui/label";
import { errorText } from "../../../lib/orkestr/errors";
import { LockIcon } from "../files/icons";
import { setPreviewToken } from "./preview-token-store";
import { ReadOnlyNote } from "../../ui/read-only-note";
import { useSandboxAccess } from "../detail/use-sandbox-access";

/**
 * A protected preview (preview_auth) needs the sandbox's preview token, which the API returns only
 * at create and on rotation: the console cannot read the current one. So the user either pastes it
 * (nothing else is disturbed), or rotates it here (a new token; the old one, and whoever holds it,
 * stop working at once: hence the confirmation). Or, when this browser opened the preview before,
 * tries without a token: the cookie the preview host set may still be valid.
 */
export function PreviewTokenPanel({
  sandboxId,
  port,
  onTryWithout,
}: {
  sandboxId: string;
  port: number;
  onTryWithout: () => void;
}) {
  const [value, setValue] = useState("");
  const [confirmRotate, setConfirmRotate] = useState(false);
  const id = useId();
  // Rotating makes a new token (sandboxes.write); pasting one and trying without need no role.
  const { canChange, whyNot } = useSandboxAccess();
  const rotate = useMutation({
    mutationFn: () => previewMutations.rotateToken(sandboxId),
    onSuccess: (r) => {
      setConfirmRotate(false);
      setPreviewToken(sandboxId, r.preview_auth_token);
      toast.success("Preview token rotated", { description: "The old token no longer opens this sandbox's previews." });
    },
    onError: (e) => {
      setConfirmRotate(false);
      toast.error("Could not rotate the preview token", { description: errorText(e) });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (value.trim()) setPreviewToken(sandboxId, value.trim());
  };
  return (
    <section aria-labelledby={`${id}-title`} className="flex flex-col gap-4 rounded-lg border border-dashed p-6">
      <div className="flex items-start gap-3">
        <LockIcon className="mt-0.5 size-5 shrink-0 text-muted-foreground" />
        <div className="flex flex-col gap-1">
          <h3 id={`${id}-title`} className="font-semibold">
            Port {port} is protected
          </h3>
          <p className="text-sm text-muted-foreground">
            This sandbox was created with <span className="font-mono">preview_auth</span>: its preview URLs answer 401
            without the sandbox&apos;s preview token. The API shows the token only when it is made, so the console needs
            it from you. It stays in this tab&apos;s memory, never on Baton&apos;s server.
          </p>
        </div>
      </div>
      <form onSubmit={submit} className="flex flex-col gap-2 sm:flex-row sm:items-end">
        <div className="flex min-w-0 flex-1 flex-col gap-2">
          <Label htmlFor={id}>Preview token</Label>
          <Input
            id={id}
            type="password"
            autoComplete="off"
            spellCheck={false}
            placeholder="pvt_…"
            value={value}
            onChange={(e) => setValue(e.target.value)}
          />
        </div>
        <Button type="submit" disabled={!value.trim()}>
          Use this token
        </Button>
      </form>
      <div className="flex flex-wrap items-center gap-2 text-sm">
        {canChange ? (
          <Button variant="outline" size="sm" onClick={() => setConfirmRotate(true)}>
            Rotate and use a new token…
          </Button>
        ) : null}
        <Button variant="ghost" size="sm" onClick={onTryWithout}>
          Try without a token
        </Button>
        <span className="text-xs text-muted-foreground">
          (works when this browser opened the preview before and its cookie is still valid)
        </span>
      </div>
      {!canChange ? <ReadOnlyNote>{whyNot("rotate the preview token")}</ReadOnlyNote> : null}
      <Dialog
        open={confirmRotate}
        onOpenChange={setConfirmRotate}
        title="Rotate the preview token?"
        description="A new token is made and the current one stops working at once."
      >
        <div className="flex flex-col gap-4 text-sm">
          <p>
            Everything that uses the current token gets 401 until it is given the new one: SDK clients, shared links,
            scripts, and other people&apos;s browsers. Paste the token instead if you have it.
          </p>
          <DialogActions>
            <Button variant="destructive" onClick={() => rotate.mutate()} disabled={rotate.isPending}>
              {rotate.isPending ? "Rotating…" : "Rotate token"}
            </Button>
          </DialogActions>
        </div>
      </Dialog>
    </section>
  );
}
