/**
 * The event types a webhook can subscribe to (POST /v1/webhooks, field `event_types`): the
 * contract's list plus the resource events the engine records for its other resources (as
 * GET /v1/sandboxes/:id/events carries them); webhook.test only ever comes from
 * POST /v1/webhooks/:id/test. One list for the console's schemas and the local engine, which
 * imports it from here; dependency-free, so either side can load it.
 */
export const WEBHOOK_EVENT_TYPES = [
  "sandbox.created",
  "sandbox.paused",
  "sandbox.resumed",
  "sandbox.terminated",
  "sandbox.expired",
  "template.build_finished",
  "volume.moved",
  "volume.created",
  "volume.deleted",
  "snapshot.created",
  "webhook.test",
] as const;
