import { NoConnection } from "../layout/no-connection";

/** The templates pages without an orkestr connection. */
export function TemplatesNoConnection() {
  return (
    <NoConnection>
      Templates are built and listed through an orkestr connection: the hosted API with your token, any v1 server, or
      the local engine that ships with Baton.
    </NoConnection>
  );
}
