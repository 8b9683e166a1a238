"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { errorText } from "../../lib/orkestr/errors";
import type { Template } from "../../lib/orkestr/schemas/templates";
import { templateKeys } from "../../lib/queries/templates";
import { templateMutations, templatePageQueries } from "../../lib/queries/template-pages";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";
import { Dialog, DialogActions } from "../ui/dialog";
import { toast } from "../ui/toast";
import { SandboxLinks } from "./sandbox-links";
import { useTeamRouter } from "../layout/team-link";

/**
 * Confirms a template's delete, naming it and the live sandboxes that run it. The engine lets those
 * keep running (it removes the layer when the last one ends); a server that refuses a template in
 * use answers with why, and the dialog says it, unchanged.
 */
export function DeleteTemplateDialog({ template, onClose }: { template: Template | null; onClose: () => void }) {
  const router = useTeamRouter();
  const queryClient = useQueryClient();
  const users = useQuery({ ...templatePageQueries.users(template?.id ?? ""), enabled: template !== null });
  const remove = useMutation({
    mutationFn: (id: string) => templateMutations.delete(id),
    onSuccess: (_, id) => {
      toast.success(`Template ${template?.name ?? id} deleted`);
      queryClient.removeQueries({ queryKey: templateKeys.detail(id) });
      void queryClient.invalidateQueries({ queryKey: templateKeys.all });
      onClose();
      router.push("/templates");
    },
  });
  const inUse = users.data?.length ?? 0;
  return (
    <Dialog
      open={template !== null}
      onOpenChange={(open) => {
        if (!open) {
          remove.reset();
          onClose();
        }
      }}
      title="Delete this template?"
      description="Its name is free again at once. New sandboxes cannot start from it. This cannot be undone."
    >
      {template ? (
        <div className="flex flex-col gap-4 text-sm">
          <p className="rounded-md bg-muted px-3 py-2 font-mono">
            {template.name ?? template.id} <span className="text-muted-foreground">({template.id})</span>
          </p>
          {inUse > 0 ? (
            <div className="flex flex-col gap-2" data-testid="delete-in-use">
              <p>
                {inUse === 1 ? "1 live sandbox runs" : `${inUse} live sandboxes run`} this template. They keep running;
                the template&apos;s files are removed when the last of them ends.
              </p>
              <SandboxLinks sandboxes={users.data ?? []} max={5} />
            </div>
          ) : null}
          {remove.isError ? (
            <Alert variant="destructive">
              <AlertTitle className="font-semibold">The template was not deleted</AlertTitle>
              <AlertDescription className="text-foreground">{errorText(remove.error)}</AlertDescription>
            </Alert>
          ) : null}
          <DialogActions>
            <Button variant="destructive" disabled={remove.isPending} onClick={() => remove.mutate(template.id)}>
              {remove.isPending ? "Deleting…" : "Delete template"}
            </Button>
          </DialogActions>
        </div>
      ) : null}
    </Dialog>
  );
}
