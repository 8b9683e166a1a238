import "server-only";

/**
 * An error Baton's API passes on as it is (lib/server/errors.ts describeError): its `detail` is one
 * sentence written for the user (never a token, never internals), answered with its `code`, its
 * HTTP `status` and, when it is about one form field, that `field`. The refusals of the token vault,
 * the base-URL check and the local engine's setup are this one thing with their own codes.
 */
export abstract class UserFacingError<Code extends string = string> extends Error {
  abstract readonly status: number;
  /** The form field the error is about ("base_url", …), if any. */
  readonly field: string | undefined;
  constructor(
    readonly code: Code,
    readonly detail: string,
    options: { cause?: unknown; field?: string } = {},
  ) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.field = options.field;
  }
}
