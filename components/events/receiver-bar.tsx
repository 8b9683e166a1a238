"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { apiJson } from "../../lib/api/core";
import { object } from "../../lib/api/read";
import { path } from "../../lib/orkestr/path";
import { errorText } from "../../lib/orkestr/errors";
import {
  deleteReceiver,
  receivedEventKeys,
  restartReceived,
  withoutReceiver,
  type Receiver,
} from "../../lib/queries/received-events";
import { Button } from "../ui/button";
import { ReadOnlyNote } from "../ui/read-only-note";
import { useRoleReason } from "../layout/use-role-reason";
import { CodeTabs } from "../ui/code-tabs";
import { CopyButton } from "../ui/copy-button";
import { Dialog, DialogActions } from "../ui/dialog";
import { toast } from "../ui/toast";
import { createReceiverCode, deleteReceiverCode, testReceiverCode } from "./receiver-code";

const readTest = object<{ delivery_id?: string | null }>();

/** POST /api/v1/webhooks/{id}/test through Baton's proxy: a webhook.test delivery to the receiver. */
const sendTest = (webhookId: string) =>
  apiJson({ method: "POST", path: path`/api/v1/webhooks/${webhookId}/test` }, readTest);

/** The receiver's address and its actions: send a test event, stop receiving (confirmed), as code. */
export function ReceiverBar({ receiver, baseUrl }: { receiver: Receiver; baseUrl: string }) {
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  // Testing and stopping change the webhook (webhooks.write).
  const readOnly = useRoleReason("webhooks.write", "send test events or stop the receiver");
  const test = useMutation({
    mutationFn: () => sendTest(receiver.webhook_id),
    onSuccess: () =>
      toast.success("Test event sent", { description: "It appears below once the webhook delivers it." }),
    onError: (e) => toast.error(errorText(e, "The test event could not be sent.")),
  });
  const stop = useMutation({
    mutationFn: () => deleteReceiver(receiver.id),
    onSuccess: () => {
      setConfirming(false);
      queryClient.setQueryData(receivedEventKeys.receiver(), withoutReceiver(receiver));
      void queryClient.invalidateQueries({ queryKey: receivedEventKeys.all });
      restartReceived();
      toast.success("Baton stopped receiving events", { description: "The webhook was deleted." });
    },
  });
  return (
    <section aria-labelledby="receiver-heading" className="flex flex-col gap-3 rounded-lg border p-4">
      <div className="flex flex-col gap-3 sm:flex-row sm:items-start sm:justify-between">
        <div className="flex min-w-0 flex-col gap-1">
          <h2 id="receiver-heading" className="flex items-center gap-2 text-sm font-semibold">
            <span aria-hidden="true" className="size-2 rounded-full bg-success" />
            Receiving in Baton
          </h2>
          <p className="text-sm text-muted-foreground">
            Webhook <code className="font-mono text-xs">{receiver.webhook_id}</code> delivers every event to{" "}
            <code className="font-mono text-xs break-all">{receiver.url}</code>. Baton keeps its signing secret
            encrypted and records a delivery only when its signature matches.
          </p>
        </div>
        <div className="flex shrink-0 flex-wrap items-center gap-2">
          <CopyButton text={receiver.url} label="Copy URL" size="sm" variant="outline" />
          {readOnly ? null : (
            <>
              <Button size="sm" variant="outline" onClick={() => test.mutate()} disabled={test.isPending}>
                {test.isPending ? "Sending…" : "Send a test event"}
              </Button>
              <Button size="sm" variant="outline" onClick={() => setConfirming(true)}>
                Stop receiving
              </Button>
            </>
          )}
        </div>
      </div>
      {readOnly ? <ReadOnlyNote>{readOnly}</ReadOnlyNote> : null}
      <details className="group text-sm">
        <summary className="cursor-pointer text-muted-foreground hover:text-foreground">Show code</summary>
        <div className="mt-3 flex flex-col gap-4">
          <div className="flex flex-col gap-1">
            <h3 className="text-xs font-medium text-muted-foreground">The webhook Baton made</h3>
            <CodeTabs snippets={createReceiverCode(baseUrl, receiver.url)} testId="code-receive" />
          </div>
          <div className="flex flex-col gap-1">
            <h3 className="text-xs font-medium text-muted-foreground">Send a test event</h3>
            <CodeTabs snippets={testReceiverCode(baseUrl, receiver.webhook_id)} testId="code-test" />
          </div>
          <div className="flex flex-col gap-1">
            <h3 className="text-xs font-medium text-muted-foreground">Stop receiving</h3>
            <CodeTabs snippets={deleteReceiverCode(baseUrl, receiver.webhook_id)} testId="code-stop" />
          </div>
        </div>
      </details>
      <Dialog
        open={confirming}
        onOpenChange={(open) => !stop.isPending && setConfirming(open)}
        title="Stop receiving events in Baton?"
        description="The webhook is deleted from your connection and the events Baton recorded are deleted with it. Sandbox pages go back to polling for changes."
      >
        {stop.isError ? (
          <p role="alert" className="text-sm text-destructive">
            {errorText(stop.error, "Baton could not stop receiving. Try again.")}
          </p>
        ) : null}
        <DialogActions cancelDisabled={stop.isPending}>
          <Button variant="destructive" onClick={() => stop.mutate()} disabled={stop.isPending}>
            {stop.isPending ? "Stopping…" : "Stop receiving"}
          </Button>
        </DialogActions>
      </Dialog>
    </section>
  );
}
