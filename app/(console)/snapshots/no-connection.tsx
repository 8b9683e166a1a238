import { NoConnection as Missing } from "../../../components/layout/no-connection";

/** The snapshot pages without an orkestr connection. */
export function NoConnection() {
  return (
    <Missing>
      Your snapshots are read through an orkestr connection: the hosted API with your token, any v1 server, or the local
      engine that ships with Baton.
    </Missing>
  );
}
