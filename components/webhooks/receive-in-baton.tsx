"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId } from "react";
import { errorText } from "../../lib/orkestr/errors";
import {
  createReceiver,
  receivedEventKeys,
  receivedEventQueries,
  restartReceived,
  withReceiver,
} from "../../lib/queries/received-events";
import { Button, type ButtonProps } from "../ui/button";
import { ReadOnlyNote } from "../ui/read-only-note";
import { useRoleReason } from "../layout/use-role-reason";
import { toast } from "../ui/toast";
import { TeamLink as Link } from "../layout/team-link";

/**
 * "Receive in Baton": one click makes a webhook on the user's active connection that delivers every
 * event to Baton's own receiver (`/api/hooks/<id>`). Baton keeps its secret, encrypted, on the
 * server; the browser never sees it. Once there is a receiver the button says so and links to the
 * event feed (or, with `hideWhenReceiving`, renders nothing).
 */
export function ReceiveInBaton({
  hideWhenReceiving = false,
  size,
  variant,
}: {
  hideWhenReceiving?: boolean;
} & Pick<ButtonProps, "size" | "variant">) {
  const queryClient = useQueryClient();
  const errorId = useId();
  const receiver = useQuery(receivedEventQueries.receiver());
  // Setting up the receiver makes a webhook (webhooks.write).
  const readOnly = useRoleReason("webhooks.write", "set up Baton's receiver");
  const create = useMutation({
    mutationFn: createReceiver,
    onSuccess: ({ receiver: made, created }) => {
      queryClient.setQueryData(receivedEventKeys.receiver(), withReceiver(made));
      void queryClient.invalidateQueries({ queryKey: receivedEventKeys.lists() });
      // The stream answered "nothing to stream" before; now it has a receiver to carry.
      restartReceived();
      toast.success(created ? "Baton is receiving this connection's events" : "Baton was already receiving them", {
        description: "New events appear on the Events page as they are delivered.",
      });
    },
  });

  if (receiver.data) {
    if (hideWhenReceiving) return null;
    return (
      <Button variant="outline" size={size} asChild>
        <Link href="/events" data-testid="receiving-in-baton">
          <span aria-hidden="true" className="size-2 rounded-full bg-success" />
          Receiving in Baton
        </Link>
      </Button>
    );
  }
  if (readOnly) return hideWhenReceiving ? null : <ReadOnlyNote>{readOnly}</ReadOnlyNote>;
  return (
    <div className="flex flex-col items-start gap-1.5">
      <Button
        size={size}
        variant={variant}
        onClick={() => create.mutate()}
        disabled={create.isPending || receiver.isPending}
        aria-describedby={create.isError ? errorId : undefined}
      >
        {create.isPending ? "Setting up the receiver…" : "Receive in Baton"}
      </Button>
      {create.isError ? (
        <p id={errorId} role="alert" className="max-w-md text-left text-sm text-destructive">
          {errorText(create.error, "Baton could not set up its receiver. Try again.")}
        </p>
      ) : null}
    </div>
  );
}
