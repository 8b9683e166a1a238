import "server-only";
import { z } from "zod";

/**
 * The receiving endpoint's id. Any text: an id of the wrong shape is just one no receiver has
 * (401 unknown_receiver, like any other unknown id), not a validation error that tells it apart.
 */
export const HookParams = z.object({ id: z.string() });

export const ReceiverParams = z.object({ id: z.string().min(1).max(100) });

export const EventsQuery = z.object({
  type: z
    .string()
    .trim()
    .max(100)
    .regex(/^[a-z0-9_.]*$/, { error: "an event type is lowercase words joined by dots, like sandbox.paused" })
    .optional(),
  cursor: z.string().max(100).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});
