import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { LazyAutoRefresh } from "./lazy-auto-refresh";

/**
 * The console shell when its own database is restarting or unreachable (the session cannot be
 * read): what happened and that the page asks again by itself, in place of a generic error page.
 * `reload`: it asks with a new page load, for a URL that names no team (see AutoRefresh).
 */
export function DatabaseOutage({ retryAfterSeconds, reload }: { retryAfterSeconds: number; reload: boolean }) {
  return (
    <main id="main" className="mx-auto flex min-h-dvh w-full max-w-xl flex-col justify-center px-4 py-10">
      <Alert variant="warning" data-testid="database-outage">
        <AlertTitle>The Baton database is unavailable</AlertTitle>
        <AlertDescription className="flex flex-col gap-3 text-foreground">
          <p>
            Baton could not read your session: its database is restarting or unreachable. Nothing is lost; this page
            tries again by itself and shows your console as soon as the database answers.
          </p>
          <LazyAutoRefresh retryAfterSeconds={retryAfterSeconds} reload={reload} />
        </AlertDescription>
      </Alert>
    </main>
  );
}
