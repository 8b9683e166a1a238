import { NoConnection as Missing } from "../../../components/layout/no-connection";

/** The webhook pages without an orkestr connection. */
export function NoConnection() {
  return (
    <Missing>
      Webhooks belong to an orkestr account and are managed through a connection: the hosted API with your token, any v1
      server, or the local engine that ships with Baton.
    </Missing>
  );
}
